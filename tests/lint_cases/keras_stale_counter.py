# Modelled on Keras train_step overrides that count micro-steps in a Python
# attribute: fit traces train_step once, so the count moves once, at tracing.
import tensorflow as tf


class CountingModel(tf.keras.Model):
    def __init__(self, steps, *args, **kwargs):
        super(CountingModel, self).__init__(*args, **kwargs)
        self.steps = steps
        self.micro_step = 0
        self.first_call = True

    def train_step(self, data):
        x, y = data
        if self.first_call:
            self.first_call = False
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.micro_step += 1  # <- GAC105
        return {"loss": loss}
