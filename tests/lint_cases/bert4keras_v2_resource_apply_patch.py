# Modelled on a TF2 text classifier that copies bert4keras' accumulating
# optimizer for tf.keras (OptimizerV2; public, repository not named by the
# index): the subclass overrides bert4keras' own hook `_resource_apply`,
# patches K.update so the parent's update only lands when
# `self.iterations % N == 0`, and sums the gradients in a slot. The parent
# (bert4keras' Adam) reads self.iterations for its bias correction, and the
# inherited apply_gradients advances it on every micro-batch (GAC107).
import tensorflow as tf
from tensorflow.keras import backend as K


def AccumOptimizer(BaseOptimizer):
    class NewOptimizer(BaseOptimizer):
        def __init__(self, grad_accum_steps=2, *args, **kwargs):
            super(NewOptimizer, self).__init__(*args, **kwargs)
            self.grad_accum_steps = grad_accum_steps

        def _create_slots(self, var_list):
            super(NewOptimizer, self)._create_slots(var_list)
            for var in var_list:
                self.add_slot(var, "ag")

        def _resource_apply(self, grad, var, indices=None):
            cond = K.equal(self.iterations % self.grad_accum_steps, 0)  # <- GAC107
            ag = self.get_slot(var, "ag")
            plain_update = K.update

            def gated_update(x, new_x):
                return plain_update(x, K.switch(cond, new_x, x))

            K.update = gated_update
            op = super(NewOptimizer, self)._resource_apply(ag / self.grad_accum_steps, var)
            K.update = plain_update
            with tf.control_dependencies([op]):
                restarted = K.switch(cond, K.zeros_like(ag), ag)
                with tf.control_dependencies([K.update(ag, restarted)]):
                    return K.update(ag, ag + grad)

    return NewOptimizer
