# Modelled on an accumulating OptimizerV2 wrapper of an accumulation
# package (an early version): a slot per variable sums the gradients in
# _resource_apply_dense, a tf.cond hands the raw slot to the inner
# optimizer every N calls, and apply_gradients gives the inner optimizer
# the wrapper's own step counter, which advances on every micro-step.
import tensorflow as tf


class SlotAccumulator(tf.keras.optimizers.Optimizer):
    def __init__(self, optimizer, accum_steps=4, name="SlotAccumulator", **kwargs):
        super(SlotAccumulator, self).__init__(name, **kwargs)
        self.inner = optimizer
        self.accum_steps = accum_steps

    def _create_slots(self, var_list):
        self.inner._create_slots(var_list=var_list)
        for var in var_list:
            self.add_slot(var, "sum")

    def apply_gradients(self, grads_and_vars, name=None, **kwargs):
        self.inner._iterations = self.iterations  # <- GAC107
        return super(SlotAccumulator, self).apply_gradients(grads_and_vars, name, **kwargs)

    def _resource_apply_dense(self, grad, var, apply_state=None):
        total = self.get_slot(var, "sum")
        total.assign_add(grad, read_value=False)

        def flush():
            update = self.inner._resource_apply_dense(total.read_value(), var)  # <- GAC101
            return tf.group(update, total.assign(tf.zeros_like(total), read_value=False))

        return tf.cond((self.iterations + 1) % self.accum_steps == 0, flush, tf.no_op)
