# Modelled on a small accumulating trainer class (TF2, public, repository
# not named by the index): its @tf.function train_step adds gradients of
# the loss / N to tf.Variable sums, then advances a Python int counter
# and applies when `counter % N == 0`. The function is traced once: the
# counter moves at tracing only (GAC105), and the test that reads it is
# decided by the trace (counter 1): the apply is never put in the graph
# (GAC109). With no cycle at all, the epochs carry none (no GAC110).
import numpy as np
import tensorflow as tf


class AccumulatingTrainer(object):
    def __init__(self, model, optimizer, loss_fn, accumulation_steps=4):
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self.accumulation_steps = accumulation_steps
        self.step_counter = 0
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in model.trainable_variables]

    @tf.function
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = self.loss_fn(y, self.model(x, training=True)) / self.accumulation_steps
        grads = tape.gradient(loss, self.model.trainable_variables)
        for s, g in zip(self.sums, grads):
            s.assign_add(g)
        self.step_counter += 1  # <- GAC105
        if self.step_counter % self.accumulation_steps == 0:  # <- GAC109
            self.optimizer.apply_gradients(zip(self.sums, self.model.trainable_variables))
            for s in self.sums:
                s.assign(tf.zeros_like(s))
        return loss


def main(model, epochs=2):
    x = np.random.rand(100, 10).astype("float32")
    y = (x.sum(axis=1) > 5).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    trainer = AccumulatingTrainer(model, tf.keras.optimizers.Adam(1e-3),
                                  tf.keras.losses.BinaryCrossentropy())
    for epoch in range(epochs):
        for xb, yb in dataset:
            trainer.train_step(xb, yb)
