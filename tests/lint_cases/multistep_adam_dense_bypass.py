# Modelled on a TF1 MultistepAdamOptimizer derived from tensor2tensor's
# (public, repo unknown): _apply_cond adds each gradient to a slot and
# applies Adam on the sum every N steps, and the sparse hooks go through
# it; but _apply_dense and _resource_apply_dense are overridden to call
# Adam's kernels directly, so the dense variables are updated on every
# micro-batch and never see the sum (GAC102, twice).
import tensorflow as tf
from tensorflow.python.training import training_ops


class MultistepAdamOptimizer(tf.train.AdamOptimizer):
    def __init__(self, n=4, **kwargs):
        super(MultistepAdamOptimizer, self).__init__(**kwargs)
        self._n = n

    def _apply_cond(self, apply_fn, grad, var, *args, **kwargs):
        grad_acc = self.get_slot(var, "grad_acc")

        def apply_adam():
            total = (grad_acc + grad) / self._n
            with tf.control_dependencies([apply_fn(total, var, *args, **kwargs)]):
                return grad_acc.assign(tf.zeros_like(grad_acc))

        def accumulate():
            return tf.group(tf.assign_add(grad_acc, grad))

        return tf.cond(tf.equal(self._get_iter_variable(), 0), apply_adam, accumulate)

    def _apply_sparse(self, grad, var):
        return self._apply_cond(self._apply_dense, tf.convert_to_tensor(grad), var)

    def _apply_dense(self, grad, var):
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        beta1_power, beta2_power = self._get_beta_accumulators()
        return training_ops.apply_adam(  # <- GAC102
            var, m, v, beta1_power, beta2_power, self._lr_t, self._beta1_t, self._beta2_t,
            self._epsilon_t, grad, use_locking=self._use_locking).op

    def _resource_apply_dense(self, grad, var):
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        beta1_power, beta2_power = self._get_beta_accumulators()
        return training_ops.resource_apply_adam(  # <- GAC102
            var.handle, m.handle, v.handle, beta1_power, beta2_power, self._lr_t,
            self._beta1_t, self._beta2_t, self._epsilon_t, grad, use_locking=self._use_locking)
