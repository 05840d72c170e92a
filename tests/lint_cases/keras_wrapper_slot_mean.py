# Modelled on the same wrapper with its "MEAN" reduction: each gradient is
# divided by N in place before it is added to the slot, so the slot holds
# the mean the inner optimizer applies. The counter is its own. Clean.
import tensorflow as tf


class SlotMean(tf.keras.optimizers.Optimizer):
    def __init__(self, optimizer, accum_steps=4, name="SlotMean", **kwargs):
        super(SlotMean, self).__init__(name, **kwargs)
        self.inner = optimizer
        self.accum_steps = accum_steps
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False)

    def _create_slots(self, var_list):
        self.inner._create_slots(var_list=var_list)
        for var in var_list:
            self.add_slot(var, "mean")

    def _resource_apply_dense(self, grad, var, apply_state=None):
        mean = self.get_slot(var, "mean")
        grad /= tf.cast(self.accum_steps, grad.dtype)
        mean.assign_add(grad, read_value=False)

        def flush():
            update = self.inner._resource_apply_dense(mean.read_value(), var)
            return tf.group(update, mean.assign(tf.zeros_like(mean), read_value=False))

        return tf.cond((self.calls + 1) % self.accum_steps == 0, flush, tf.no_op)
