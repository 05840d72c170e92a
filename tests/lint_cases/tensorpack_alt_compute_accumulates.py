# Modelled on a modified tensorpack AccumGradOptimizer ("Alt", public,
# repository unknown): a proxy optimizer delegates apply_gradients to the
# wrapped one, and the subclass overrides only compute_gradients, which
# adds each micro-batch's gradients / N to its slots and hands back the
# running sums as the gradients. Nothing gates the apply it inherits, so
# every minimize applies the partial sums, on every micro-batch.
import tensorflow as tf


class ProxyOptimizer(tf.train.Optimizer):
    def __init__(self, opt, name="ProxyOptimizer"):
        super(ProxyOptimizer, self).__init__(False, name)
        self._opt = opt

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, *args, **kwargs):
        return self._opt.apply_gradients(*args, **kwargs)  # <- GAC102


class AccumGradOptimizerAlt(ProxyOptimizer):
    def __init__(self, opt, niter=4):
        super(AccumGradOptimizerAlt, self).__init__(opt, "AccumGrad")
        self._niter = int(niter)

    def compute_gradients(self, *args, **kwargs):
        counter = tf.Variable(0, name="counter", trainable=False, dtype=tf.int32)
        pairs = [(g, v) for g, v in self._opt.compute_gradients(*args, **kwargs)
                 if g is not None]
        with tf.variable_scope(self._name, reuse=tf.AUTO_REUSE):
            slots = [self._zeros_slot(v, "accum_grad", self._name) for _, v in pairs]
        update_counter = tf.cond(tf.equal(counter, self._niter),
                                 lambda: tf.assign(counter, 1),
                                 lambda: tf.assign_add(counter, 1))
        with tf.control_dependencies([update_counter]):
            clear = tf.cond(tf.equal(counter, 1),
                            lambda: tf.group(*[tf.assign(s, tf.zeros_like(s)) for s in slots]),
                            tf.no_op)
        with tf.control_dependencies([clear]):
            return list(zip([tf.assign_add(s, tf.divide(g, self._niter))
                             for s, (g, _) in zip(slots, pairs)], [v for _, v in pairs]))
