# Modelled on tensorpack's AccumGradOptimizer (tfutils/optimizer.py,
# public): when the caller passes a global_step, the wrapper groups an
# increment of it with the op that runs every micro-step (the tf.cond that
# applies every N-th), so the step counts micro-steps. The test ``if
# global_step is not None:`` only asks whether one was given.
import tensorflow as tf


class AccumulatingOptimizer(tf.compat.v1.train.Optimizer):
    def __init__(self, opt, niter):
        super(AccumulatingOptimizer, self).__init__(False, "Accumulating")
        self._opt, self._niter = opt, niter

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        slots = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                 for _, v in grads_and_vars]
        counter = tf.Variable(0, trainable=False, name="counter")
        adds = [s.assign_add(g / self._niter) for s, (g, _) in zip(slots, grads_and_vars)]
        update_slots = tf.group(tf.compat.v1.assign_add(counter, 1), *adds)

        def update_grad():
            applied = self._opt.apply_gradients([(s, v) for s, (_, v) in zip(slots, grads_and_vars)])
            with tf.control_dependencies([applied]):
                return tf.group(*[s.assign(tf.zeros_like(s)) for s in slots])

        with tf.control_dependencies([update_slots]):
            op = tf.cond(tf.equal(tf.math.floormod(counter, self._niter), 0), update_grad, tf.no_op)
        if global_step is not None:
            op = tf.group(op, tf.compat.v1.assign_add(global_step, 1))  # <- GAC107
        return op
