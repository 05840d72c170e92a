# Modelled on mcschmitz/duck-and-cover's accumulating Keras model: train_step
# slices its batch into N parts (the slice size is batch // N: a division
# of the data, not of the loss), sums the parts' gradients and divides the
# sum by N once (correct: nothing to report).
import tensorflow as tf


class SlicedModel(tf.keras.Model):
    def __init__(self, n_slices, *args, **kwargs):
        super(SlicedModel, self).__init__(*args, **kwargs)
        self.n_slices = n_slices

    def train_step(self, data):
        x, y = data
        size = tf.shape(x)[0] // self.n_slices
        variables = self.trainable_variables
        sums = [tf.zeros_like(v) for v in variables]
        for k in range(self.n_slices):
            x_k, y_k = x[k * size:(k + 1) * size], y[k * size:(k + 1) * size]
            with tf.GradientTape() as tape:
                loss = self.compiled_loss(y_k, self(x_k, training=True))
            grads = tape.gradient(loss, variables)
            sums = [s + g for s, g in zip(sums, grads)]
        sums = [s / self.n_slices for s in sums]
        self.optimizer.apply_gradients(zip(sums, variables))
        return {"loss": loss}
