# Modelled on mohammad-albarham/Multilingual-CLIP (Utils.py), an optimizer
# wrapper that adds each gradient to a slot and hands the inner optimizer
# `tf.where(step % N == 0, sums, zeros)`: the inner update still runs on
# every micro-batch (zeros move Adam's weights too), and the sums it gets
# on the applying step are not divided.
import tensorflow as tf


class GradientAccumulator(tf.keras.optimizers.Optimizer):
    def __init__(self, optimizer, accum_steps, name="GradientAccumulator", **kwargs):
        super(GradientAccumulator, self).__init__(name, **kwargs)
        self._optimizer = optimizer
        self._accum_steps = accum_steps
        self.step = tf.Variable(0, dtype=tf.int64, trainable=False)

    def _create_slots(self, var_list):
        for var in var_list:
            self.add_slot(var, "ga")

    def _resource_apply_dense(self, grad, var, apply_state=None):
        accum_gradient = self.get_slot(var, "ga")
        accum_gradient.assign_add(grad)
        return self._apply_grad(accum_gradient, var)

    def _apply_grad(self, accum_gradient, var):
        grad = tf.where(self.step % self._accum_steps == 0,  # <- GAC102
                        accum_gradient, tf.zeros_like(var))
        train_op = self._optimizer._resource_apply_dense(grad, var)  # <- GAC101
        reset = accum_gradient.assign(
            tf.where(grad == accum_gradient, tf.zeros_like(accum_gradient), accum_gradient))
        return tf.group(train_op, reset)
