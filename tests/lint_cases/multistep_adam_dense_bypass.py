# Modelled on a TF1 MultistepAdamOptimizer derived from tensor2tensor's
# (public, repo unknown): _apply_cond adds each gradient to a slot and
# applies Adam on the sum every N steps, and the sparse hooks go through
# it; but _apply_dense and _resource_apply_dense are overridden to call
# Adam's kernels directly, so the dense variables are updated on every
# micro-batch and never see the sum (GAC102, twice). And its _finish
# advances the counter by 1 without the mod N of the original, so the
# gate `iter == 0` never opens after the counter's start at 1 (GAC109).
import tensorflow as tf
from tensorflow.python.training import training_ops


class MultistepAdamOptimizer(tf.train.AdamOptimizer):
    def __init__(self, n=4, **kwargs):
        super(MultistepAdamOptimizer, self).__init__(**kwargs)
        self._n = n

    def _create_slots(self, var_list):
        super(MultistepAdamOptimizer, self)._create_slots(var_list)
        first = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(initial_value=0 if self._n == 1 else 1, name="iter",
                                       colocate_with=first)
        for v in var_list:
            self._zeros_slot(v, "grad_acc", self._name)

    def _get_iter_variable(self):
        return self._get_non_slot_variable("iter", graph=tf.compat.v1.get_default_graph())

    def _apply_cond(self, apply_fn, grad, var, *args, **kwargs):
        grad_acc = self.get_slot(var, "grad_acc")

        def apply_adam():
            total = (grad_acc + grad) / self._n
            with tf.control_dependencies([apply_fn(total, var, *args, **kwargs)]):
                return grad_acc.assign(tf.zeros_like(grad_acc))

        def accumulate():
            return tf.group(tf.assign_add(grad_acc, grad))

        return tf.cond(tf.equal(self._get_iter_variable(), 0),  # <- GAC109
                       apply_adam, accumulate)

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

    def _finish(self, update_ops, name_scope):
        step = self._get_iter_variable()
        with tf.control_dependencies(update_ops):
            advance = step.assign(step + 1, use_locking=self._use_locking)
        return tf.group(*update_ops + [advance], name=name_scope)
