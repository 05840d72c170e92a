# Modelled on SiaFahim/eva (training_strategy.py): the micro-batch loss is
# divided by the number of accumulation steps, and the sums are then read
# through the accumulator's get_averaged_gradients(), which divides by it
# again.
import tensorflow as tf


class Strategy(object):
    def __init__(self, accumulation_steps):
        self.gradient_accumulation_steps = accumulation_steps

    def train_step(self, model, optimizer, inputs, targets, gradient_accumulator):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(inputs) - targets))
            scaled_loss = loss / tf.cast(self.gradient_accumulation_steps, tf.float32)
        gradients = tape.gradient(scaled_loss, model.trainable_variables)
        gradient_accumulator.accumulate_gradients(gradients)
        if gradient_accumulator.should_apply_gradients():
            averaged = gradient_accumulator.get_averaged_gradients()
            clipped, _ = tf.clip_by_global_norm(averaged, 1.0)
            optimizer.apply_gradients(zip(clipped, model.trainable_variables))  # <- GAC108
        return loss
