# Modelled on a TF2 detection and segmentation (multitask) trainer
# (public, repository unknown): each training phase, an epoch run by a
# caller elsewhere, starts by making the list of sums anew and then
# applies every N batches; nothing is applied after its loop, so the last
# partial cycle of each phase is dropped by the next one.
import tensorflow as tf


class Trainer(object):
    def __init__(self, model, optimizer, steps):
        self.model, self.optimizer, self.steps = model, optimizer, steps
        self.sums = []

    def _step(self, batch, index):
        images, targets = batch
        with tf.GradientTape() as tape:
            loss = self.model.loss(targets, self.model(images, training=True)) / self.steps
        grads = tape.gradient(loss, self.model.trainable_variables)
        if not self.sums:
            self.sums = [tf.zeros_like(g) for g in grads]
        self.sums = [s + g for s, g in zip(self.sums, grads)]
        if (index + 1) % self.steps == 0:
            self.optimizer.apply_gradients(zip(self.sums, self.model.trainable_variables))
            self.sums = []
        return loss

    def run_phase(self, dataset):
        self.sums = []
        total = 0.0
        for index, batch in enumerate(dataset):  # <- GAC110
            total += self._step(batch, index)
        return total
