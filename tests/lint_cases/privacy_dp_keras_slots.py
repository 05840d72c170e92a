# Modelled on tensorflow/privacy's DP Keras optimizer (dp_optimizer_keras):
# with gradient_accumulation_steps > 1 each variable's micro-batch gradient,
# scaled by 1/N through the `apply_state` dict, is added to a slot, and the
# parent's update runs when floormod(iterations + 1, N) == 0. The slot holds
# the mean (no GAC101); but the cycle is keyed on the optimizer's own
# iterations, which apply_gradients advances every micro-batch, so the
# parent's schedules and bias correction count micro-batches (GAC107). The
# `else` is the plain step (its noisy grad is no accumulator).
import tensorflow as tf


class DPAdam(tf.keras.optimizers.Adam):
    def __init__(self, noise_stddev, gradient_accumulation_steps=1, **kwargs):
        super(DPAdam, self).__init__(**kwargs)
        self._noise_stddev = noise_stddev
        self.gradient_accumulation_steps = gradient_accumulation_steps

    def _create_slots(self, var_list):
        super(DPAdam, self)._create_slots(var_list)
        if self.gradient_accumulation_steps > 1:
            for var in var_list:
                self.add_slot(var, "grad_acc")

    def _prepare_local(self, var_device, var_dtype, apply_state):
        super(DPAdam, self)._prepare_local(var_device, var_dtype, apply_state)
        if self.gradient_accumulation_steps > 1:
            apply_update = tf.math.equal(
                tf.math.floormod(self.iterations + 1,  # <- GAC107
                                 self.gradient_accumulation_steps), 0)
            grad_scaler = tf.cast(1. / self.gradient_accumulation_steps, var_dtype)
            apply_state[(var_device, var_dtype)].update(
                {"apply_update": apply_update, "grad_scaler": grad_scaler})

    def _resource_apply_dense(self, grad, var, apply_state=None):
        if self.gradient_accumulation_steps > 1:
            coefficients = apply_state[(var.device, var.dtype.base_dtype)]
            grad_acc = self.get_slot(var, "grad_acc")

            def _update():
                applied = super(DPAdam, self)._resource_apply_dense(
                    grad_acc + grad * coefficients["grad_scaler"], var, apply_state)
                with tf.control_dependencies([applied]):
                    return grad_acc.assign(tf.zeros_like(grad_acc), read_value=False)

            def _accumulate():
                return grad_acc.assign_add(grad * coefficients["grad_scaler"], read_value=False)

            return tf.cond(coefficients["apply_update"], _update, _accumulate)
        else:
            grad = grad + tf.random.normal(tf.shape(grad), stddev=self._noise_stddev)
            return super(DPAdam, self)._resource_apply_dense(grad, var, apply_state)
