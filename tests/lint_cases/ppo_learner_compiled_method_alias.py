# Modelled on a PPO learner with a Sonnet optimizer (TF2, public,
# repository not named by the index): the class keeps a compiled alias of
# its accumulating method (`self.compiled_grads_acc =
# maybe_compile(self.grads_acc)`) and runs a full-batch epoch two ways.
# The eager path applies the sums scaled by 1 / number of minibatches
# (clean); the tf.function path applies the same sums undivided, although
# each minibatch's loss is a mean (GAC101).
import tensorflow as tf


def maybe_compile(fn, compile=True):
    return tf.function(fn) if compile else fn


class Learner(object):
    def __init__(self, policy, optimizer):
        self.policy = policy
        self.optimizer = optimizer
        self.compiled_grads = maybe_compile(self.grads)
        self.compiled_grads_acc = maybe_compile(self.grads_acc)

    def grads(self, batch):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.policy.loss(batch))
        return tape.gradient(loss, self.policy.trainable_variables), loss

    def grads_acc(self, batch, sums):
        grads, loss = self.compiled_grads(batch)
        sums = [s + g for s, g in zip(sums, grads)]
        return loss, sums

    @tf.function
    def apply_scaled(self, sums, scale):
        self.optimizer.apply([g * scale for g in sums], self.policy.trainable_variables)

    def epoch_eager(self, minibatches):
        sums = [tf.zeros_like(v) for v in self.policy.trainable_variables]
        for batch in minibatches:
            _, sums = self.compiled_grads_acc(batch, sums)
        self.apply_scaled(sums, 1.0 / len(minibatches))

    @tf.function
    def epoch_compiled(self, minibatches):
        sums = [tf.zeros_like(v) for v in self.policy.trainable_variables]
        for batch in minibatches:
            with tf.control_dependencies(sums):
                _, sums = self.compiled_grads_acc(batch, sums)
        self.optimizer.apply(sums, self.policy.trainable_variables)  # <- GAC101
