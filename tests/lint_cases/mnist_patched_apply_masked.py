# Modelled on a Keras optimizer patch for gradient accumulation (TF2,
# public, repo unknown): the patch replaces optimizer.apply_gradients,
# adds each gradient / N to its sums, multiplies the sums by 0 or 1
# (whether this call closes a cycle) and hands them to the original
# apply_gradients it kept, on every call. The original runs on every
# micro-batch: with Adam, zero gradients still move the weights (GAC102).
import tensorflow as tf


class GradientAccumulationPatch(object):
    def __init__(self, n, orig_apply_gradients, trainable_variables):
        self.n = n
        self.sums = [tf.Variable(tf.zeros(v.shape, dtype=v.dtype)) for v in trainable_variables]
        self.step = tf.Variable(0, dtype=tf.int64)
        self._orig_apply_gradients = orig_apply_gradients

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        self.step.assign_add(1)
        ready = tf.equal(tf.math.mod(self.step, self.n), 0)
        apply, keep = tf.cast(ready, tf.float32), tf.cast(tf.logical_not(ready), tf.float32)
        grads_and_vars = list(grads_and_vars)
        for i, (grad, _) in enumerate(grads_and_vars):
            self.sums[i].assign_add(grad / self.n)
        masked = [s * apply for s in self.sums]
        self._orig_apply_gradients(  # <- GAC102
            zip(masked, [v for _, v in grads_and_vars]), *args, **kwargs)
        for s in self.sums:
            s.assign(s * keep)


def get_patched_optimizer(optimizer, n, trainable_variables):
    patch = GradientAccumulationPatch(n, optimizer.apply_gradients, trainable_variables)
    optimizer.apply_gradients = patch.apply_gradients
    return optimizer
