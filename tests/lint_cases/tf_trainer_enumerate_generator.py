# Modelled on yhy1117/X-Mixup (trainer.py), a copy of the TFTrainer that
# transformers shipped in 2020: a generator accumulates one micro-batch per
# item, and the loop over it applies when `i % N == 0` with `i` from 0 (a
# tf.function that hands the apply to the strategy), so the first update
# comes after one micro-batch.
import tensorflow as tf


class Trainer(object):
    def __init__(self, model, strategy, accumulator, steps):
        self.model = model
        self.strategy = strategy
        self.gradient_accumulator = accumulator
        self.steps = steps

    def train(self, dataset, optimizer):
        for loss in self._training_steps(dataset, optimizer):
            print(loss)

    def _training_steps(self, dataset, optimizer):
        for i, loss in enumerate(self._accumulate_next(dataset)):
            if i % self.steps == 0:  # <- GAC109
                self._apply_gradients(optimizer)
                yield loss

    @tf.function
    def _apply_gradients(self, optimizer):
        self.strategy.run(self._step, args=(optimizer,))

    def _step(self, optimizer):
        scale = self.gradient_accumulator.step * self.strategy.num_replicas_in_sync
        grads = [g / tf.cast(scale, g.dtype) for g in self.gradient_accumulator.gradients]
        optimizer.apply_gradients(list(zip(grads, self.model.trainable_variables)))
        self.gradient_accumulator.reset()

    def _accumulate_next(self, dataset):
        for features, labels in dataset:
            yield self.strategy.run(self._forward, args=(features, labels))

    def _forward(self, features, labels):
        loss = tf.reduce_mean(tf.square(self.model(features) - labels))
        grads = tf.gradients(loss, self.model.trainable_variables)
        self.gradient_accumulator(grads)
        return loss
