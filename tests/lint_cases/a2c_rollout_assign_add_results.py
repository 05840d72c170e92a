# Modelled on a TF2 eager actor-critic trainer (CartPole A2C, public, repo
# unknown): sums made anew per call, one gradient per slice of the rollout
# added by ``[acc[i].assign_add(g) ...]`` inside the loop, and the list
# those assign_adds return (the running sums) applied once after it.
import tensorflow as tf


class RolloutTrainer(object):
    def __init__(self, model, slices=4):
        self.model = model
        self.slices = slices
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

    def train(self, states, targets):
        tvs = self.model.trainable_variables
        accum_vars = [tf.Variable(tf.zeros_like(v), trainable=False) for v in tvs]
        for x, y in zip(tf.split(states, self.slices), tf.split(targets, self.slices)):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x) - y))
            grads = tape.gradient(loss, tvs)
            summed = [accum_vars[i].assign_add(g) for i, g in enumerate(grads)]
        self.optimizer.apply_gradients(zip(summed, tvs))  # <- GAC101

    def train_mean(self, states, targets):
        tvs = self.model.trainable_variables
        accum_vars = [tf.Variable(tf.zeros_like(v), trainable=False) for v in tvs]
        for x, y in zip(tf.split(states, self.slices), tf.split(targets, self.slices)):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x) - y))
            grads = tape.gradient(loss, tvs)
            summed = [accum_vars[i].assign_add(g) for i, g in enumerate(grads)]
        self.optimizer.apply_gradients([(s / self.slices, v) for s, v in zip(summed, tvs)])


class IndexedRolloutTrainer(object):
    """The same rollout walked as ``for i in range(len(targets))``: a loop
    that differentiates in its body walks micro-batches, not variables, so
    the apply after it runs once per rollout (clean)."""

    def __init__(self, model, slices=4):
        self.model = model
        self.optimizer = tf.keras.optimizers.Adam(1e-3)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in model.trainable_variables]

    def train(self, states, targets):
        tvs = self.model.trainable_variables
        for i in range(len(targets)):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(states[i]) - targets[i]))
            grads = tape.gradient(loss, tvs)
            for j in range(len(grads)):
                self.sums[j].assign_add(grads[j] / len(targets))
        self.optimizer.apply_gradients(zip(self.sums, tvs))
        for s in self.sums:
            s.assign(tf.zeros_like(s))
