# Modelled on a segmentation trainer: a tf.function takes the running sums
# and returns them with this micro-batch's gradients added; the Python loop
# applies them when `step > 0 and step % N == 0` with `step` from a
# progress-bar-wrapped enumerate (a first cycle of N + 1 micro-batches),
# never divides the sum of mean-loss gradients by N, and drops the last
# partial cycle when the epoch ends (the sums the step returns are local to
# the epoch).
import tensorflow as tf
from tqdm import tqdm


class Trainer(object):
    def __init__(self, model, optimizer, loss_fn, accum_steps):
        self.model, self.optimizer = model, optimizer
        self.loss_fn, self.accum_steps = loss_fn, accum_steps

    @tf.function
    def accumulate_step(self, x, y, sums, variables):
        with tf.GradientTape() as tape:
            loss = self.loss_fn(y, self.model(x, training=True))
        grads = tape.gradient(loss, variables)
        sums = [s + g for s, g in zip(sums, grads)]
        return loss, sums

    def train_epoch(self, dataset):
        variables = self.model.trainable_variables
        sums = [tf.zeros_like(v) for v in variables]
        for step, (x, y) in tqdm(enumerate(dataset)):  # <- GAC110
            loss, sums = self.accumulate_step(x, y, sums, variables)
            if step > 0 and step % self.accum_steps == 0:  # <- GAC109
                self.optimizer.apply_gradients(zip(sums, variables))  # <- GAC101
                sums = [tf.zeros_like(v) for v in variables]
