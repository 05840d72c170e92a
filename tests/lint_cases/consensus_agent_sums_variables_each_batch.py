# Modelled on a decentralised-optimisation agent (TF2 eager, public,
# repository not named by the index) that computes its full-data gradient
# over a tf.data set batch by batch: each batch's gradient, divided by the
# number of batches, is assign_add-ed into tf.Variable sums and the result
# is returned to the consensus step. The variables are created as zeros
# inside the batch loop, so each batch restarts them and the returned
# "full" gradient holds only the last batch's share (GAC109).
import tensorflow as tf


class Node(object):
    def __init__(self, model, data):
        self._model = model
        self._data = data

    def full_gradient(self, weights):
        batches = tf.cast(self._data.cardinality(), tf.float32)
        loss_fn = tf.keras.losses.MeanSquaredError()
        for features, target in self._data:
            with tf.GradientTape() as tape:
                loss = loss_fn(target, self._model(features))
            sums = [tf.Variable(tf.zeros_like(w), trainable=False)  # <- GAC109
                    for w in weights]
            grads = tape.gradient(loss, weights)
            out = [sums[i].assign_add(g / batches) for i, g in enumerate(grads)]
        return out

    def step(self, weights, neighbours, rate):
        grads = self.full_gradient(weights)
        return [w - rate * (g + n) for w, g, n in zip(weights, grads, neighbours)]
