# Modelled on anup42/yolo26's tf trainer (yolo26_tf/trainer.py): an eager
# epoch loop whose step adds each micro-batch's gradients (of a loss divided
# by N) and applies through self._apply_accumulated() when
# self.accum_counter % N == 0; after each epoch, a flush applies what is
# left. The flush never sets the counter back, so the next epoch's first
# cycle ends after N - r micro-batches (GAC109 at the flush). ResetTrainer
# below sets it back in its flush: clean.
import tensorflow as tf


class Trainer(object):
    def __init__(self, model, optimizer, accumulate=4):
        self.model, self.optimizer, self.accumulate = model, optimizer, accumulate
        self.accum_counter = 0
        self.accum_grads = [tf.Variable(tf.zeros_like(v), trainable=False)
                            for v in model.trainable_variables]

    def train(self, dataset, epochs):
        for epoch in range(epochs):
            for x, y in dataset:
                self._train_step(x, y)
            self._flush_accumulated()  # <- GAC109

    def _train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y)) / float(self.accumulate)
        grads = tape.gradient(loss, self.model.trainable_variables)
        for acc, grad in zip(self.accum_grads, grads):
            acc.assign_add(grad)
        self.accum_counter += 1
        if self.accum_counter % self.accumulate == 0:
            self._apply_accumulated()

    def _apply_accumulated(self):
        grads = [g.read_value() for g in self.accum_grads]
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        for g in self.accum_grads:
            g.assign(tf.zeros_like(g))

    def _flush_accumulated(self):
        if any(float(tf.reduce_sum(tf.abs(g))) > 0 for g in self.accum_grads):
            self._apply_accumulated()


class ResetTrainer(object):
    def __init__(self, model, optimizer, accumulate=4):
        self.model, self.optimizer, self.accumulate = model, optimizer, accumulate
        self.seen = 0
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in model.trainable_variables]

    def train(self, dataset, epochs):
        for epoch in range(epochs):
            for x, y in dataset:
                self._train_step(x, y)
            self._flush()

    def _train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
        grads = tape.gradient(loss, self.model.trainable_variables)
        for s, grad in zip(self.sums, grads):
            s.assign_add(grad)
        self.seen += 1
        if self.seen % self.accumulate == 0:
            self._apply(self.accumulate)

    def _apply(self, n):
        grads = [s.read_value() / n for s in self.sums]
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        for s in self.sums:
            s.assign(tf.zeros_like(s))

    def _flush(self):
        left = self.seen % self.accumulate
        if left:
            self._apply(left)
        self.seen = 0
