# Modelled on an LDPC neural min-sum decoder trainer (TF2 eager, with a
# small accumulator class of its own, public, repository unknown): the
# class's ``accumulate`` clips each gradient before adding it, so every
# micro-batch is clipped alone; the loop that calls it never sees a clip.
import tensorflow as tf


class Accumulator(object):
    def __init__(self, steps):
        self.steps = steps
        self.count = 0
        self.sums = None

    def accumulate(self, grads, variables):
        if self.sums is None:
            self.sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in variables]
        for s, g in zip(self.sums, grads):
            s.assign_add(tf.clip_by_norm(g, 0.1))  # <- GAC106
        self.count += 1
        return self.count >= self.steps

    def take(self, variables):
        pairs = list(zip(self.sums, variables))
        self.count, self.sums = 0, None
        return pairs


def train(model, optimizer, dataset, steps):
    accumulator = Accumulator(steps)
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = model.loss(y, model(x)) / steps
        grads = tape.gradient(loss, model.trainable_variables)
        if accumulator.accumulate(grads, model.trainable_variables):
            optimizer.apply_gradients(accumulator.take(model.trainable_variables))
