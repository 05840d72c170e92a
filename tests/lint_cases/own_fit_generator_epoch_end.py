# Modelled on a memory-saving training wrapper (TF2, public, repository
# not named by the index): a plain class (no Keras Model) with a
# train_step that sums gradients and applies every N steps of a count that
# never restarts, and a fit of its own whose epochs' loop runs the
# callbacks and a data generator's on_epoch_end (which only shuffles).
# The partial cycle of each epoch is carried into the next (GAC110, at
# the class's own epochs' loop, once).
import numpy as np
import tensorflow as tf


class ShuffledBatches(tf.keras.utils.Sequence):
    def __init__(self, x, y, batch_size):
        self.x, self.y, self.batch_size = x, y, batch_size
        self.indices = np.arange(len(x))

    def __len__(self):
        return int(np.ceil(len(self.x) / float(self.batch_size)))

    def __getitem__(self, i):
        rows = self.indices[i * self.batch_size:(i + 1) * self.batch_size]
        return self.x[rows], self.y[rows]

    def on_epoch_end(self):
        np.random.shuffle(self.indices)


class AccumulatingTrainer(object):
    def __init__(self, model, optimizer, accumulation_steps=4):
        self.model, self.optimizer = model, optimizer
        self.accumulation_steps = accumulation_steps
        self.step_count = 0
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in model.trainable_variables]

    @tf.function
    def _accumulate(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.model.loss(y, self.model(x))) / self.accumulation_steps
        for s, g in zip(self.sums, tape.gradient(loss, self.model.trainable_variables)):
            s.assign_add(g)
        return loss

    def _apply(self):
        self.optimizer.apply_gradients(zip(self.sums, self.model.trainable_variables))
        for s in self.sums:
            s.assign(tf.zeros_like(s))

    def train_step(self, data):
        x, y = data
        loss = self._accumulate(x, y)
        self.step_count += 1
        if self.step_count % self.accumulation_steps == 0:
            self._apply()
        return loss

    def fit(self, batches, epochs=1):
        for epoch in range(epochs):  # <- GAC110
            for i in range(len(batches)):
                self.train_step(batches[i])
            batches.on_epoch_end()


def main(model, x, y, epochs):
    trainer = AccumulatingTrainer(model, tf.keras.optimizers.Adam(1e-3), accumulation_steps=4)
    trainer.fit(ShuffledBatches(x, y, 32), epochs=epochs)
