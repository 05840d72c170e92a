# Modelled on a Gated-Shape-CNN segmentation trainer (TF2, public, repo
# unknown): train_loop's epochs call train(), which calls train_epoch()
# inside a summary writer's `with`; its loop runs train_step, which adds
# each gradient / N to variables and applies when its counter reaches N.
# Nothing resets or applies what an epoch leaves: the partial cycle is
# carried into the next epoch (GAC110, at the epochs' loop).
import tensorflow as tf


class Trainer(object):
    def __init__(self, model, optimiser, dataset, epochs, n_accum_iters=4):
        self.model, self.optimiser, self.dataset = model, optimiser, dataset
        self.epochs, self.n_accum_iters = epochs, n_accum_iters
        self.current_iters = tf.Variable(0)
        self.accum_vars = [tf.Variable(tf.zeros_like(v), trainable=False)
                           for v in model.trainable_variables]
        self.writer = tf.summary.create_file_writer("logs")

    def accumulate(self, gradients):
        self.current_iters.assign_add(1)
        for k, grad in enumerate(gradients):
            self.accum_vars[k].assign_add(grad / self.n_accum_iters)
        if self.current_iters == self.n_accum_iters:
            self.optimiser.apply_gradients(zip(self.accum_vars, self.model.trainable_variables))
            self.current_iters.assign(0)
            for v in self.accum_vars:
                v.assign(tf.zeros_like(v))

    def train_step(self, im, label):
        with tf.GradientTape() as tape:
            loss = self.model.loss(label, self.model(im, training=True))
        self.accumulate(tape.gradient(loss, self.model.trainable_variables))

    def train_loop(self):
        for _ in range(self.epochs):  # <- GAC110
            self.train()
            self.validate()

    def train(self):
        with self.writer.as_default():
            self.train_epoch()

    def train_epoch(self):
        for im, label in self.dataset:
            self.train_step(im, label)
