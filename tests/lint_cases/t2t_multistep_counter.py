# Modelled on tensor2tensor's MultistepAdamOptimizer: the counter starts at
# 1 and is advanced after the == N test, so each cycle holds N micro-batches
# and the mean is applied. Clean.
import tensorflow as tf


class MultistepSGD(object):
    def __init__(self, opt, n):
        self._opt = opt
        self._n = n
        self.iter = tf.Variable(1, dtype=tf.int32, trainable=False)

    def apply_gradients(self, grads_and_vars):
        accs = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                for _, v in grads_and_vars]
        added = [a.assign_add(g) for a, (g, _) in zip(accs, grads_and_vars)]

        def apply_mean():
            means = [(a / self._n, v) for a, (_, v) in zip(accs, grads_and_vars)]
            with tf.control_dependencies([self._opt.apply_gradients(means)]):
                return tf.group(*[a.assign(tf.zeros_like(a)) for a in accs])

        with tf.control_dependencies(added):
            update = tf.cond(tf.equal(self.iter, self._n), apply_mean, tf.no_op)
        with tf.control_dependencies([update]):
            return self.iter.assign(tf.where(tf.equal(self.iter, self._n), 1, self.iter + 1))
