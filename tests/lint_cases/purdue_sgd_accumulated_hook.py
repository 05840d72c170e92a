# Modelled on PurdueDualityLab/TensorFlowModels' SGDAccumulated
# (yolo/optimization/SGDAccumulated.py): a Keras SGD subclass that adds each
# gradient into a slot with state_ops.assign(g, g + grad), hands the parent's
# apply_gradients the sums or zeros by tf.cond on every call, and lets its own
# _resource_apply_dense divide by N and decide, by tf.cond, whether to update
# at all. The zeros move nothing and the sums are divided there (no GAC101,
# no GAC102); but the parent's apply advances self.iterations every
# micro-step, and the class keys its cycle on it (GAC107, once per class: at
# the test beside the parent's apply).
import tensorflow as tf
from tensorflow.python.ops import state_ops


class SGDAccumulated(tf.keras.optimizers.SGD):
    def __init__(self, accumulation_steps=4, one_offset=False, **kwargs):
        super(SGDAccumulated, self).__init__(**kwargs)
        self._set_hyper("accumulation_steps", accumulation_steps)
        self._offset = 1 if one_offset else 0

    def _get_accumulation_steps(self, iteration):
        steps = tf.cast(self._get_hyper("accumulation_steps"), tf.int64)
        return tf.maximum(steps, tf.cast(iteration * 0 + 1, tf.int64))

    def _create_slots(self, var_list):
        for var in var_list:
            self.add_slot(var, "g")

    def _prepare_local(self, var_device, var_dtype, apply_state):
        super(SGDAccumulated, self)._prepare_local(var_device, var_dtype, apply_state)
        steps = self._get_accumulation_steps(self.iterations)
        update = (self.iterations + self._offset) % steps == 0
        apply_state[(var_device, var_dtype)]["update"] = tf.cast(update, var_dtype)
        apply_state[(var_device, var_dtype)]["steps"] = tf.cast(steps, var_dtype)

    def _resource_apply_dense(self, grad, var, apply_state=None):
        coefficients = (apply_state or {}).get((var.device, var.dtype.base_dtype))
        grad = grad / coefficients["steps"]

        def update():
            return super(SGDAccumulated, self)._resource_apply_dense(grad, var, apply_state)

        def keep():
            return state_ops.assign(var, var)

        return tf.cond(coefficients["update"] == 1, update, keep)

    def apply_gradients(self, grads_and_vars, name=None, **kwargs):
        grads_and_vars = list(grads_and_vars)
        var_list = [v for _, v in grads_and_vars]
        steps = self._get_accumulation_steps(self.iterations)
        zeros, sums = [], []
        for grad, var in grads_and_vars:
            g = self.get_slot(var, "g")
            g_a = grad + g
            g_a = state_ops.assign(g, g_a)
            zeros.append(tf.zeros_like(grad))
            sums.append(g_a)
        grads = tf.cond((self.iterations + self._offset) % steps == 0,  # <- GAC107
                        true_fn=lambda: sums, false_fn=lambda: zeros)
        super(SGDAccumulated, self).apply_gradients(zip(grads, var_list), name=name, **kwargs)
