# Modelled on tensor2tensor's LargebatchAdamOptimizer
# (tensor2tensor/utils/largebatch_optimizer.py, and forks such as
# DCSaunders/tensor2tensor): a tf.train.AdamOptimizer subclass that applies
# when its own counter is 0 and advances it mod N in _finish, after the
# update. Made 0, the counter lets the very first micro-batch update alone
# (GAC109, at the test; the message names the line that makes it 0). The
# later MultistepAdamOptimizer starts its counter at 1 when N > 1
# (StartsAtOne below: clean).
import tensorflow as tf
from tensorflow.python.ops import control_flow_ops, variable_scope


class FirstAlone(tf.compat.v1.train.AdamOptimizer):
    def __init__(self, n=2, **kwargs):
        super(FirstAlone, self).__init__(**kwargs)
        self._n = n
        self._iter = None

    def _create_slots(self, var_list):
        super(FirstAlone, self)._create_slots(var_list)
        self._iter = variable_scope.variable(0, name="iter", trainable=False,
                                             dtype=tf.int32)
        for v in var_list:
            self._zeros_slot(v, "grad_acc", self._name)

    def _apply_dense(self, grad, var):
        grad_acc = self.get_slot(var, "grad_acc")

        def update():
            total = (grad_acc + grad) / tf.cast(self._n, grad.dtype)
            op = super(FirstAlone, self)._apply_dense(total, var)
            with tf.control_dependencies([op]):
                return tf.group(op, grad_acc.assign(tf.zeros_like(grad_acc)))

        return tf.cond(tf.equal(self._iter, 0), update,  # <- GAC109
                       lambda: tf.group(grad_acc.assign_add(grad)))

    def _finish(self, update_ops, name_scope):
        with tf.control_dependencies(update_ops):
            step = self._iter.assign(tf.math.mod(self._iter + 1, self._n))
        return control_flow_ops.group(*update_ops + [step], name=name_scope)


class StartsAtOne(tf.compat.v1.train.AdamOptimizer):
    def __init__(self, n=2, **kwargs):
        super(StartsAtOne, self).__init__(**kwargs)
        self._n = n

    def _create_slots(self, var_list):
        super(StartsAtOne, self)._create_slots(var_list)
        self._create_non_slot_variable(initial_value=0 if self._n == 1 else 1,
                                       name="iter", colocate_with=var_list[0])
        for v in var_list:
            self._zeros_slot(v, "grad_acc", self._name)

    def _get_iter_variable(self):
        return self._get_non_slot_variable("iter", graph=tf.compat.v1.get_default_graph())

    def _apply_dense(self, grad, var):
        grad_acc = self.get_slot(var, "grad_acc")

        def update():
            total = (grad_acc + grad) / tf.cast(self._n, grad.dtype)
            op = super(StartsAtOne, self)._apply_dense(total, var)
            with tf.control_dependencies([op]):
                return tf.group(op, grad_acc.assign(tf.zeros_like(grad_acc)))

        return tf.cond(tf.equal(self._get_iter_variable(), 0), update,
                       lambda: tf.group(grad_acc.assign_add(grad)))

    def _finish(self, update_ops, name_scope):
        counter = self._get_iter_variable()
        with tf.control_dependencies(update_ops):
            step = counter.assign(tf.math.mod(counter + 1, self._n))
        return control_flow_ops.group(*update_ops + [step], name=name_scope)
