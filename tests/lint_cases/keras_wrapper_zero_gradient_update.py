# Modelled on a Keras OptimizerV2 accumulation wrapper (TF2, public, repo
# unknown): its own _resource_apply_dense decides by tf.cond, but the
# branch that should skip still runs the inner optimizer's update with
# grad * 0.0, so Adam's moments keep moving the weights on every
# micro-batch. The twin's skipping branch runs a plain descent with a zero
# learning rate, which moves nothing: clean.
import tensorflow as tf
from tensorflow.python.training import training_ops


class GradientAccumulation(tf.keras.optimizers.Optimizer):
    def __init__(self, optimizer, accu_steps=4, name="GradientAccumulation", **kwargs):
        super().__init__(name, **kwargs)
        self._optimizer = optimizer
        self._set_hyper("accuSteps", accu_steps)

    def _create_slots(self, var_list):
        for var in var_list:
            self.add_slot(var, "accuGrads")

    def _resource_apply_dense(self, grad, var, apply_state=None):
        accu = self.get_slot(var, "accuGrads")
        accu.assign_add(grad / tf.cast(self._get_hyper("accuSteps"), grad.dtype))

        def _use(accu, grad, var):
            result = self._optimizer._resource_apply_dense(accu, var, apply_state)
            accu.assign(tf.zeros_like(accu))
            return result

        def _skip(accu, grad, var):
            return self._optimizer._resource_apply_dense(grad * 0.0, var, apply_state)

        steps = self._get_hyper("accuSteps", tf.int64)
        return tf.cond((self.iterations + 1) % steps == 0,  # <- GAC102
                       lambda: _use(accu, grad, var), lambda: _skip(accu, grad, var))


class GradientAccumulationSGD(tf.keras.optimizers.Optimizer):
    def __init__(self, accu_steps=4, name="GradientAccumulationSGD", **kwargs):
        super().__init__(name, **kwargs)
        self._set_hyper("accuSteps", accu_steps)

    def _create_slots(self, var_list):
        for var in var_list:
            self.add_slot(var, "accuGrads")

    def _resource_apply_dense(self, grad, var, apply_state=None):
        accu = self.get_slot(var, "accuGrads")
        accu.assign_add(grad / tf.cast(self._get_hyper("accuSteps"), grad.dtype))

        def _use(accu, grad, var):
            result = training_ops.resource_apply_gradient_descent(var.handle, 0.1, accu)
            accu.assign(tf.zeros_like(accu))
            return result

        def _skip(accu, grad, var):
            return training_ops.resource_apply_gradient_descent(var.handle, 0.0, grad * 0.0)

        steps = self._get_hyper("accuSteps", tf.int64)
        return tf.cond((self.iterations + 1) % steps == 0,
                       lambda: _use(accu, grad, var), lambda: _skip(accu, grad, var))
