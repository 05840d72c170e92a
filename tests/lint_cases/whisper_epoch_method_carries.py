# Modelled on a Whisper distillation trainer (TF2 eager, public, repo
# unknown): train() runs the epochs and calls _train_epoch, whose loop
# runs train_step; train_step sums the gradients of a loss divided by N in
# a Python list and applies when its counter reaches N. Nothing applies or
# resets what is left at an epoch's end: the partial cycle is carried
# into the next epoch (GAC110, at the epochs' loop).
import tensorflow as tf


class Trainer(object):
    def __init__(self, model, optimizer, steps=4):
        self.model = model
        self.optimizer = optimizer
        self.steps = steps
        self.sums = None
        self.count = 0

    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = self.model.loss(y, self.model(x, training=True)) / self.steps
        grads = tape.gradient(loss, self.model.trainable_variables)
        if self.sums is None:
            self.sums = [tf.zeros_like(g) for g in grads]
        self.sums = [s + g for s, g in zip(self.sums, grads)]
        self.count += 1
        if self.count >= self.steps:
            self.optimizer.apply_gradients(zip(self.sums, self.model.trainable_variables))
            self.sums = None
            self.count = 0
        return loss

    def train(self, epochs):
        for epoch in range(epochs):  # <- GAC110
            self._train_epoch(epoch)

    def _train_epoch(self, epoch):
        for x, y in self.dataset:
            self.train_step(x, y)
