# Modelled on a diffusion model's Keras step: the sums are a Python list on
# `self`, rebuilt by a list comprehension inside the traced step; the step
# accumulates when `counter % N or counter == 0` and applies in the `else`,
# where that micro-batch's own gradient is never added, and the raw sum of
# mean-loss gradients is applied.
import tensorflow as tf


class DiffusionModel(tf.keras.Model):
    def __init__(self, grad_accum, **kwargs):
        super(DiffusionModel, self).__init__(**kwargs)
        self.grad_accum = grad_accum
        self.counter = tf.Variable(0, trainable=False)
        self.sums = None

    def denoise_step(self, batch):
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(batch, self(batch, training=True))
        gradients = tape.gradient(loss, self.trainable_variables)
        if self.counter == 0:
            self.sums = [tf.zeros_like(v) for v in self.trainable_variables]
        if self.counter % self.grad_accum or self.counter == 0:  # <- GAC110 GAC109
            self.sums = [s + g for s, g in zip(self.sums, gradients)]  # <- GAC105
        else:
            self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))  # <- GAC101
            self.sums = [tf.zeros_like(v) for v in self.trainable_variables]
        self.counter.assign_add(1)
        return loss

    def train_step(self, batch):
        return {"loss": self.denoise_step(batch)}
