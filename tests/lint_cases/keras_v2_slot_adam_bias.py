# Modelled on a gradient-accumulating Adam for Keras OptimizerV2 (public,
# repository unknown): _resource_apply_dense adds each micro-batch's
# gradient to an "accuGrads" slot and updates under tf.cond every N
# iterations, but the inherited apply_gradients advances self.iterations
# on every call, so the bias correction `tf.pow(beta_1, iterations + 1)`
# in _prepare_local counts micro-steps (GAC107).
import tensorflow as tf
from tensorflow.python.training import training_ops


class AccumulatedAdam(tf.keras.optimizers.Adam):
    def __init__(self, accu_steps=4, **kwargs):
        super(AccumulatedAdam, self).__init__(**kwargs)
        self._set_hyper("accu_steps", accu_steps)

    def _create_slots(self, var_list):
        super(AccumulatedAdam, self)._create_slots(var_list)
        for var in var_list:
            self.add_slot(var, "accu_grads")

    def _prepare_local(self, var_device, var_dtype, apply_state):
        super(AccumulatedAdam, self)._prepare_local(var_device, var_dtype, apply_state)
        local_step = tf.cast(self.iterations + 1, var_dtype)  # <- GAC107
        beta_1_power = tf.pow(self._get_hyper("beta_1", var_dtype), local_step)
        beta_2_power = tf.pow(self._get_hyper("beta_2", var_dtype), local_step)
        apply_state[(var_device, var_dtype)].update(
            dict(beta_1_power=beta_1_power, beta_2_power=beta_2_power))

    def _resource_apply_dense(self, grad, var, apply_state=None):
        coefficients = apply_state[(var.device, var.dtype.base_dtype)]
        accu = self.get_slot(var, "accu_grads")
        accu.assign_add(grad)
        steps = self._get_hyper("accu_steps", tf.int64)

        def update():
            mean = accu / tf.cast(steps, accu.dtype)
            result = training_ops.resource_apply_adam(
                var.handle, self.get_slot(var, "m").handle, self.get_slot(var, "v").handle,
                coefficients["beta_1_power"], coefficients["beta_2_power"],
                coefficients["lr_t"], coefficients["beta_1_t"], coefficients["beta_2_t"],
                coefficients["epsilon"], mean, use_locking=self._use_locking)
            with tf.control_dependencies([result]):
                return accu.assign(tf.zeros_like(accu))

        return tf.cond(tf.equal((self.iterations + 1) % steps, 0), update,
                       lambda: tf.no_op())
