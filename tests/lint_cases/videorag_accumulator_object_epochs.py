# Modelled on a video RAG-head classifier (TF2 eager, public, repo
# unknown): a plain Accumulator object rebuilds its sums as a new list on
# every micro-batch and applies their mean when its count reaches N; the
# step function hands it each batch's gradients. The object outlives the
# epoch's loop and nothing applies what is left at an epoch's end: the
# partial cycle is carried into the next epoch (GAC110).
import tensorflow as tf


class Accumulator:
    def __init__(self, model, steps):
        self.steps = steps
        self.count = 0
        self.variables = model.trainable_variables
        self.sums = [tf.zeros_like(v) for v in self.variables]

    def add(self, grads):
        rebuilt = []
        for total, g in zip(self.sums, grads):
            if g is None:
                rebuilt.append(total)
            else:
                rebuilt.append(total + g)
        self.sums = rebuilt
        self.count += 1

    def maybe_apply(self, optimizer):
        if self.count == self.steps:
            optimizer.apply_gradients(zip([s / self.steps for s in self.sums], self.variables))
            self.sums = [tf.zeros_like(v) for v in self.variables]
            self.count = 0


def train_step(model, optimizer, loss_fn, x, y, accumulator):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    accumulator.add(grads)
    accumulator.maybe_apply(optimizer)
    return loss


def main(model, train_dataset, epochs=10):
    optimizer = tf.keras.optimizers.Adam(1e-5)
    loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)
    accumulator = Accumulator(model, 8)
    for epoch in range(epochs):  # <- GAC110
        for x, y in train_dataset:
            train_step(model, optimizer, loss_fn, x, y, accumulator)
