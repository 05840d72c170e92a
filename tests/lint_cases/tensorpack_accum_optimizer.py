# Modelled on tensorpack's AccumGradOptimizer (TF1): slots summed in
# apply_gradients, the apply in a nested def run by tf.cond; the sum is
# applied as it is (an N times larger step).
import tensorflow as tf


class AccumOptimizer(tf.compat.v1.train.Optimizer):
    def __init__(self, opt, niter):
        self._opt = opt
        self._niter = int(niter)
        super(AccumOptimizer, self).__init__(False, "AccumOptimizer")

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        slots = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                 for _, v in grads_and_vars]
        slots_and_vars = [(s, gv[1]) for s, gv in zip(slots, grads_and_vars)]
        counter = tf.Variable(0, trainable=False, dtype=tf.int32)
        ops = []
        for s, gv in zip(slots, grads_and_vars):
            ops.append(s.assign_add(gv[0]))
        update_counter = tf.compat.v1.assign_add(counter, 1)

        def update_grad():
            update_op = self._opt.apply_gradients(slots_and_vars)  # <- GAC101
            with tf.control_dependencies([update_op]):
                return tf.group(*[s.assign(tf.zeros_like(s)) for s in slots])

        with tf.control_dependencies(ops + [update_counter]):
            pred = tf.equal(tf.math.floormod(counter, self._niter), 0)
            return tf.cond(pred, update_grad, tf.no_op)
