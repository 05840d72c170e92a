# Modelled on a TextGCN trainer's eager loop (TF2, public, repo unknown):
# the sums are made anew as zeros at the top of every batch, so each apply
# holds one micro-batch, and the gate `if e % N:` is true when e is *not* a
# multiple of N. After the loop, `if (step + 1) % N:` in the twin asks
# whether a partial cycle is left, which is what it means there: clean.
import tensorflow as tf


class Trainer(object):
    def __init__(self, model, steps=4):
        self.model = model
        self.steps = steps
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

    def grad(self, x, y, variables):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
        return loss, tape.gradient(loss, variables)

    def train(self, batches, epochs):
        for epoch in range(epochs):
            for e, (x, y) in enumerate(batches):
                variables = self.model.trainable_variables
                grad_accumulation = [tf.zeros_like(v) for v in variables]
                loss, grads = self.grad(x, y, variables)
                grad_accumulation = [a + g for a, g in zip(grad_accumulation, grads)]
                if e % self.steps:  # <- GAC109
                    grad_accumulation = [a / self.steps for a in grad_accumulation]
                    self.optimizer.apply_gradients(zip(grad_accumulation, variables))  # <- GAC102

    def train_kept(self, batches, epochs):
        variables = self.model.trainable_variables
        for epoch in range(epochs):
            sums = [tf.zeros_like(v) for v in variables]
            for step, (x, y) in enumerate(batches):
                loss, grads = self.grad(x, y, variables)
                sums = [a + g for a, g in zip(sums, grads)]
                if (step + 1) % self.steps == 0:
                    self.optimizer.apply_gradients(zip([a / self.steps for a in sums], variables))
                    sums = [tf.zeros_like(v) for v in variables]
            if (step + 1) % self.steps:
                left = (step + 1) % self.steps
                self.optimizer.apply_gradients(zip([a / left for a in sums], variables))
