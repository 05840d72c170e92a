# Modelled on the gradient-accumulation transformers of tensorflow/addons
# and andreped/GradientAccumulator (Keras optimizer wrappers): on the
# micro-steps that should not apply, the transformer hands the optimizer
# zeros (a mask, or a cond with a zeros branch) instead of skipping it, so
# the optimizer's update still runs on every micro-batch.
import tensorflow as tf


class MaskedAccumulation(object):
    def __init__(self, optimizer, n_micro, variables):
        self.optimizer, self.n_micro = optimizer, n_micro
        self.step = tf.Variable(0, dtype=tf.int64, trainable=False)
        self.sums = dict((v.ref(), tf.Variable(tf.zeros_like(v), trainable=False))
                         for v in variables)

    def __call__(self, grads_and_vars):
        self.step.assign_add(1)
        now = tf.cast(self.step % self.n_micro == 0, tf.float32)
        for grad, var in grads_and_vars:
            self.sums[var.ref()].assign_add(grad)
        return [(self.sums[v.ref()] * now / self.n_micro, v)  # <- GAC102
                for _, v in grads_and_vars]


def transformer(n_micro, step):
    def transform(grads_and_vars):
        out = []
        for grad, var in grads_and_vars:
            total = tf.Variable(tf.zeros_like(var), trainable=False)
            total.assign_add(grad)

            def read():
                mean = total.read_value() / n_micro
                total.assign(tf.zeros_like(total))
                return mean

            out.append((tf.cond(step % n_micro == 0, read,  # <- GAC102
                                lambda: tf.zeros_like(grad)), var))
        return out
    return transform


class MaskedSumAccumulation(MaskedAccumulation):
    # (the tensorflow/addons variant: the masked sum, not divided either)
    def __call__(self, grads_and_vars):
        self.step.assign_add(1)
        can_apply = tf.cast(self.step % self.n_micro == 0, tf.float32)
        for grad, var in grads_and_vars:
            self.sums[var.ref()].assign_add(grad)
        return [(self.sums[v.ref()] * can_apply, v) for _, v in grads_and_vars]  # <- GAC101 GAC102
