# Modelled on a Keras model with gradient accumulation that skips the
# variables no gradient reached (TF2 train_step, public, repository not
# named by the index): the branch tf.cond runs at the cycle's end builds
# the (sum, variable) pairs of the variables that got a gradient and
# applies them under `if pairs:`. Model.fit runs this train_step epoch
# after epoch and the step counter lives on, so an epoch's last partial
# cycle is carried into the next (GAC110, at the cycle's test, not at
# `if pairs:`).
import tensorflow as tf


class AccumModel(tf.keras.Model):
    def __init__(self, accum_steps=4, **kwargs):
        super(AccumModel, self).__init__(**kwargs)
        self.accum_steps = accum_steps
        self._counter = tf.Variable(0, trainable=False, dtype=tf.int64)
        self._sums = None

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True)) / self.accum_steps
        grads = tape.gradient(loss, self.trainable_variables)
        if self._sums is None:
            self._sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                          for v in self.trainable_variables]
        for s, g in zip(self._sums, grads):
            if g is not None:
                s.assign_add(g)
        self._counter.assign_add(1)

        def apply_and_reset():
            pairs = [(s, v) for s, g, v in zip(self._sums, grads, self.trainable_variables)
                     if g is not None]
            if pairs:
                self.optimizer.apply_gradients(pairs)
            for s in self._sums:
                s.assign(tf.zeros_like(s))
            self._counter.assign(0)
            return tf.no_op()

        tf.cond(tf.equal(self._counter, self.accum_steps),  # <- GAC110
                apply_and_reset, lambda: tf.no_op())
        self.compiled_metrics.update_state(y, self(x))
        return {m.name: m.result() for m in self.metrics}
