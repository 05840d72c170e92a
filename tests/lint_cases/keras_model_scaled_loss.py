# Modelled on the same Keras train_step override in its later, fixed form:
# the loss is divided by the number of micro-batches before the gradient, so
# the applied sum is the big batch's mean. Clean, but for the partial
# cycle Model.fit carries across epochs (GAC110).
import tensorflow as tf


class AccumulatingModel(tf.keras.Model):
    """Accumulates ``accum_steps`` micro-batches per optimizer step."""

    def __init__(self, accum_steps, *args, **kwargs):
        super(AccumulatingModel, self).__init__(*args, **kwargs)
        self.accum_steps = accum_steps
        self.pending = None
        self.count = None

    def _make_sums(self):
        self.count = tf.Variable(0, dtype=tf.int32, trainable=False)
        self.pending = [tf.Variable(tf.zeros(v.shape, v.dtype), trainable=False)
                        for v in self.trainable_variables]

    def train_step(self, data):
        if self.pending is None:
            self._make_sums()
        x, y = data
        with tf.GradientTape() as tape:
            scaled = self.compiled_loss(y, self(x, training=True)) / float(self.accum_steps)
        for acc, grad in zip(self.pending, tape.gradient(scaled, self.trainable_variables)):
            acc.assign_add(grad)
        self.count.assign_add(1)
        tf.cond(self.count >= self.accum_steps, lambda: self.flush_pending(), lambda: None)  # <- GAC110
        return {"loss": scaled * float(self.accum_steps)}

    def flush_pending(self):
        self.optimizer.apply_gradients(list(zip(self.pending, self.trainable_variables)))
        self.count.assign(0)
        for acc in self.pending:
            acc.assign(acc * 0.0)
