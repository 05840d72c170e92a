# Modelled on a covariant compositional network's training loop (TF2 eager,
# one graph per sample): each sample's gradients, weighted by its class
# weight, are appended to a Python list, and every `batch_update_size`
# samples the list is summed with `tf.reduce_sum` and applied, never divided
# by N (GAC101). The list and its counter live across epochs, never flushed
# at an epoch's end (GAC110). The model's bias starts as a random tensor
# divided by 5, which divides no sum.
import tensorflow as tf


class GraphModel(object):
    def __init__(self, channels, batch_update_size):
        self.weights = tf.Variable(tf.random.normal([channels, channels]))
        self.bias = tf.Variable(tf.random.uniform([channels], minval=-1) / 5)
        self.batch_update_size = batch_update_size
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

    def fit(self, samples, targets, class_weights, num_epochs):
        params = [self.weights, self.bias]
        count = 0
        grads_list = []
        for epoch in range(num_epochs):  # <- GAC110
            for x, y in zip(samples, targets):
                weight = class_weights.get(int(y), 1.0)
                with tf.GradientTape() as tape:
                    out = tf.linalg.matvec(self.weights, x) + self.bias
                    loss = tf.reduce_mean(tf.square(out - y))
                grads = tape.gradient(loss, params)
                grads = list(map(lambda g: g * weight, grads))
                grads_list.append(grads)
                count += 1
                if count >= self.batch_update_size:
                    count = 0
                    summed = list(zip(*grads_list))
                    summed = list(map(lambda parts: tf.reduce_sum(parts, axis=0), summed))
                    self.optimizer.apply_gradients(zip(summed, params))  # <- GAC101
                    grads_list.clear()
