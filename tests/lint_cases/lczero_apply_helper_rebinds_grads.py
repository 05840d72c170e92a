# Modelled on the lczero-training trainer (TFProcess, eager loop): a plain
# method named train_step, not a Keras one, calls apply_grads, which
# rebinds its `grads` parameter to a list of its own (the aggregated
# gradients) before clipping and applying them. Rebinding a parameter to
# a new list loses no sum: no GAC105.
import tensorflow as tf


class TFProcess(object):
    def __init__(self, model, optimizer, aggregator, train_iter):
        self.model, self.optimizer = model, optimizer
        self.aggregator, self.train_iter = aggregator, train_iter

    @tf.function()
    def process_inner_loop(self, x, y):
        with tf.GradientTape() as tape:
            loss = self.model.loss(y, self.model(x, training=True))
        return loss, tape.gradient(loss, self.model.trainable_weights)

    def apply_grads(self, grads, batch_splits):
        grads = [g[0] for g in self.aggregator(zip(grads, self.model.trainable_weights))]
        grads, norm = tf.clip_by_global_norm(grads, 10000.0 * batch_splits)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_weights))
        return norm

    def train_step(self, batch_splits):
        grads = None
        for _ in range(batch_splits):
            x, y = next(self.train_iter)
            loss, new_grads = self.process_inner_loop(x, y)
            grads = new_grads if grads is None else [a + b for a, b in zip(grads, new_grads)]
        grads = [g / batch_splits for g in grads]
        return self.apply_grads(grads, batch_splits)
