# Modelled on the base model of a self-supervised learning library (TF2,
# Keras, public, repository not named by the index): each step adds the
# gradients of the loss / N to variable sums, then a tf.cond picks, by the
# step count, either a def that reads and resets the sums or a def that
# returns zeros, and apply_gradients runs on what it picked, every step.
# A zero gradient still moves Adam's and momentum's weights (GAC102). The
# loss was divided by N, so the applied sums are means (no GAC101).
import tensorflow as tf


class SSLModel(tf.keras.Model):
    def __init__(self, accum_steps=4, **kwargs):
        super(SSLModel, self).__init__(**kwargs)
        self.accum_steps = accum_steps
        self._sums = None
        self._count = None

    def accumulate_and_apply(self, tape, loss):
        variables = self.trainable_variables
        if self._sums is None:
            self._sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in variables]
        if self._count is None:
            self._count = tf.Variable(0, dtype=tf.int32, trainable=False)
        self._count.assign_add(1)
        grads = tape.gradient(loss / tf.cast(self.accum_steps, loss.dtype), variables)
        for s, g in zip(self._sums, grads):
            s.assign_add(g)

        def read_and_reset():
            out = [tf.identity(s) for s in self._sums]
            with tf.control_dependencies(out):
                for s in self._sums:
                    s.assign(tf.zeros_like(s))
            return out

        def zeros():
            return [tf.zeros_like(v) for v in variables]

        picked = tf.cond(tf.equal(self._count % self.accum_steps, 0),  # <- GAC102
                         true_fn=read_and_reset, false_fn=zeros)
        self.optimizer.apply_gradients(zip(picked, variables))
