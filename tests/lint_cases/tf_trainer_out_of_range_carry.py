# Modelled on yhy1117/X-Mixup and deepray-AI/deepray (trainers that wrap a
# GradientAccumulator): the epoch's loop pulls micro-batches until the
# dataset raises OutOfRangeError and then just breaks, so whatever the last,
# partial cycle added stays in the accumulator and is applied with the next
# epoch's first cycle.
import tensorflow as tf


class Trainer(object):
    def __init__(self, model, strategy, accumulator, optimizer, steps):
        self.model = model
        self.strategy = strategy
        self.gradient_accumulator = accumulator
        self.optimizer = optimizer
        self.steps = steps
        self._micro_step = tf.function(self.micro_step)

    def train_epoch(self, iterator):
        i = 0
        while True:
            try:
                self._micro_step(next(iterator))
            except tf.errors.OutOfRangeError:  # <- GAC110
                break
            i += 1
            if i % self.steps == 0:
                self.strategy.run(self.apply)

    def micro_step(self, batch):
        self.strategy.run(self.forward, args=(batch,))

    def forward(self, batch):
        x, y = batch
        loss = tf.reduce_mean(tf.square(self.model(x) - y))
        self.gradient_accumulator(tf.gradients(loss, self.model.trainable_variables))

    def apply(self):
        grads = [g / self.steps for g in self.gradient_accumulator.gradients]
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        self.gradient_accumulator.reset()
