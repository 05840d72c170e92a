# Modelled on TensorFlowASR's gradient-accumulating transducer trainer
# (public): one tf.function step splits its batch into N slices, takes
# each slice's loss with tf.nn.compute_average_loss over the step's global
# batch size, accumulates and applies once after the loop. Each slice's
# loss is already divided by the whole batch: the sum is the big batch's
# mean. Clean.
import tensorflow as tf


class Trainer(object):
    def __init__(self, model, optimizer, accumulator, steps, global_batch_size, slice_size):
        self.model, self.optimizer, self.accumulator = model, optimizer, accumulator
        self.steps, self.global_batch_size, self.slice_size = steps, global_batch_size, slice_size

    @tf.function
    def train_step(self, features, labels):
        self.accumulator.reset()
        for step in range(self.steps):
            rows = tf.range(step * self.slice_size, (step + 1) * self.slice_size)
            x, y = tf.gather(features, rows), tf.gather(labels, rows)
            with tf.GradientTape() as tape:
                per_example = self.model.loss(y, self.model(x, training=True))
                loss = tf.nn.compute_average_loss(
                    per_example, global_batch_size=self.global_batch_size)
            self.accumulator.accumulate(tape.gradient(loss, self.model.trainable_variables))
        self.optimizer.apply_gradients(
            zip(self.accumulator.gradients, self.model.trainable_variables))
