# Modelled on a Keras callback for gradient accumulation (public, repo
# unknown): at the start of each cycle it replaces the optimizer's
# get_gradients with a method that adds each batch's gradients to its
# sums and returns them. fit's own update still runs on every batch and
# applies what get_gradients returns: the partial sums, every batch
# (GAC102), beside the callback's own apply every N.
import tensorflow as tf


class GradientAccumulation(tf.keras.callbacks.Callback):
    def __init__(self, accum_steps=4):
        super(GradientAccumulation, self).__init__()
        self.accum_steps = accum_steps
        self.seen = 0
        self.sums = None

    def on_train_batch_begin(self, batch, logs=None):
        if self.seen % self.accum_steps == 0:
            self.sums = [tf.zeros_like(w) for w in self.model.trainable_weights]
            self.model.optimizer.get_gradients = self._summed_gradients  # <- GAC102

    def _summed_gradients(self, loss, params):
        grads = tf.gradients(loss, params)
        self.sums = [s + g / self.accum_steps for s, g in zip(self.sums, grads)]
        return self.sums

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen % self.accum_steps == 0:
            self.model.optimizer.apply_gradients(zip(self.sums, self.model.trainable_weights))
