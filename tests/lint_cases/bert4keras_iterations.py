# Modelled on bert4keras' accumulating optimizer factory: the subclass keys
# its cycle on its own self.iterations, the counter its parent's update reads
# (the learning-rate schedule and Adam's bias correction then count
# micro-steps).
import tensorflow as tf


def extend_with_accumulation(BaseOptimizer):
    class NewOptimizer(BaseOptimizer):
        def __init__(self, grad_accum_steps, *args, **kwargs):
            super(NewOptimizer, self).__init__(*args, **kwargs)
            self.grad_accum_steps = grad_accum_steps

        def _resource_apply_dense(self, grad, var):
            apply_now = tf.equal(self.iterations % self.grad_accum_steps, 0)  # <- GAC107
            summed = self.get_slot(var, "sum")
            mean = summed / self.grad_accum_steps
            op = super(NewOptimizer, self)._resource_apply_dense(mean, var)
            with tf.control_dependencies([op]):
                return summed.assign(tf.where(apply_now, grad, summed + grad))

    return NewOptimizer
