# Modelled on Isaac-McPadden/ExonIntronCNN's accumulating Adam subclass: the
# cycle is decided on the optimizer's own iterations, which it advances by
# hand on every call and which the parent's apply_gradients advances again
# on the calls that apply.
import tensorflow as tf


class AccumulatingAdam(tf.keras.optimizers.Adam):
    def __init__(self, n_micro, **kwargs):
        super(AccumulatingAdam, self).__init__(**kwargs)
        self.n_micro = n_micro
        self.sums = None
        self.current = None

    def apply_sums(self):
        means = [s / self.n_micro for s in self.sums]
        super(AccumulatingAdam, self).apply_gradients(zip(means, self.current))
        for s in self.sums:
            s.assign(tf.zeros_like(s))
        return tf.constant(True)

    def apply_gradients(self, grads_and_vars, name=None, **kwargs):
        grads, variables = zip(*grads_and_vars)
        if self.sums is None:
            self.sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in variables]
        for g, s in zip(grads, self.sums):
            s.assign_add(g)
        self.current = variables
        now = tf.equal((self.iterations + 1) % self.n_micro, 0)
        tf.cond(now, self.apply_sums, lambda: tf.constant(False))  # <- GAC109
        self.iterations.assign_add(1)  # <- GAC107
