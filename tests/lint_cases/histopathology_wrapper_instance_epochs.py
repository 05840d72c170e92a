# Modelled on a breast-cancer histopathology classifier's plain-Python
# GradientAccumulationModel (TF2 eager, public, repository unknown): the
# wrapper's train_step divides the loss by N, adds the gradients to its
# own list and applies every N steps; the epoch loop calls it through an
# instance (`ga_model.train_step(x, y)`) and never flushes, so each
# epoch's partial cycle is carried into the next epoch's first apply.
import tensorflow as tf


class GradientAccumulationModel(object):
    def __init__(self, model, optimizer, loss_fn, accumulation_steps=4):
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self.accumulation_steps = accumulation_steps
        self.accumulated_gradients = [tf.zeros_like(v) for v in model.trainable_variables]
        self.steps = 0

    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = self.loss_fn(y, self.model(x, training=True)) / self.accumulation_steps
        gradients = tape.gradient(loss, self.model.trainable_variables)
        for i, grad in enumerate(gradients):
            self.accumulated_gradients[i] += grad
        self.steps += 1
        if self.steps >= self.accumulation_steps:
            self.optimizer.apply_gradients(
                zip(self.accumulated_gradients, self.model.trainable_variables))
            self.accumulated_gradients = [tf.zeros_like(v) for v in self.model.trainable_variables]
            self.steps = 0
        return loss


def fit(model, train_ds, epochs):
    ga_model = GradientAccumulationModel(model, tf.keras.optimizers.Adam(1e-4),
                                         tf.keras.losses.BinaryCrossentropy())
    for epoch in range(epochs):  # <- GAC110
        for x_batch, y_batch in train_ds:
            ga_model.train_step(x_batch, y_batch)
