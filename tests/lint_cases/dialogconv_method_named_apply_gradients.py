# Modelled on misonsky/DialogConv's trainer (TF2, the HF TFTrainer shape):
# the trainer's own method is named apply_gradients; inside it, a
# tf.range loop runs N micro-batch steps that add their gradients to a
# helper accumulator, then the optimizer applies the accumulator's
# `.gradients` as they are: a sum of N mean-loss gradients (GAC101). The
# call `self.apply_gradients(features)` in the loop hands over no sums.
import tensorflow as tf


class Trainer(object):
    def __init__(self, model, optimizer, make_accumulator, steps, batch_size):
        self.model, self.optimizer = model, optimizer
        self.gradient_accumulator = make_accumulator()
        self.steps, self.batch_size = steps, batch_size

    def training_step(self, features):
        loss = tf.reduce_mean(self.model(features, training=True))
        gradients = tf.gradients(loss, self.model.trainable_variables)
        self.gradient_accumulator(gradients)

    @tf.function
    def apply_gradients(self, features):
        for _ in tf.range(self.steps):
            part = {k: f[:self.batch_size] for k, f in features.items()}
            self.training_step(part)
            features = {k: tf.concat([f[self.batch_size:], part[k]], axis=0)
                        for k, f in features.items()}
        gradients = self.gradient_accumulator.gradients
        self.optimizer.apply_gradients(  # <- GAC101
            list(zip(gradients, self.model.trainable_variables)))
        self.gradient_accumulator.reset()

    def train(self, dataset):
        for features in dataset:
            self.apply_gradients(features)
