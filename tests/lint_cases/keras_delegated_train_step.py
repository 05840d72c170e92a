# Modelled on a utility Model of a research toolkit: train_step hands the
# batch to a method of its own that counts micro-batches in a Python int
# (`self.n_pending += 1`). fit traces train_step, and with it the method it
# calls, once: the count is taken at tracing, not per batch (GAC105), and
# the test that reads it is fixed by the trace: the apply runs on every
# call or never (GAC109).
import tensorflow as tf


class ToolkitModel(tf.keras.Model):
    def __init__(self, n_accum, **kwargs):
        super(ToolkitModel, self).__init__(**kwargs)
        self.n_accum = n_accum
        self.n_pending = 0
        self.sums = None

    def train_step(self, data):
        return self.accumulating_step(data)

    def accumulating_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True)) / self.n_accum
        grads = tape.gradient(loss, self.trainable_variables)
        self.n_pending += 1  # <- GAC105
        for total, grad in zip(self.sums, grads):
            total.assign_add(grad)
        if self.n_pending == self.n_accum:  # <- GAC109
            self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))
            for total in self.sums:
                total.assign(tf.zeros_like(total))
        return {"loss": loss}
