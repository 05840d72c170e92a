# Modelled on a work-in-progress Keras model wrapper of an accumulation
# package: train_step feeds one micro-batch's (loss / N) gradients to a
# helper accumulator through a method of its own, then applies the helper's
# sums and resets it, unconditionally: every micro-batch is an update, each
# scaled down by N.
import tensorflow as tf


class WrappedModel(tf.keras.Model):
    def __init__(self, accum_steps, helper, **kwargs):
        super(WrappedModel, self).__init__(**kwargs)
        self.accum_steps = accum_steps
        self.helper_accumulator = helper

    def micro_batch(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True)) / self.accum_steps
        self.helper_accumulator(tape.gradient(loss, self.trainable_variables))
        return loss

    def train_step(self, data):
        loss = self.micro_batch(data)
        self.optimizer.apply_gradients(  # <- GAC102
            zip(self.helper_accumulator.gradients, self.trainable_variables))
        self.helper_accumulator.reset()
        return {"loss": loss}
