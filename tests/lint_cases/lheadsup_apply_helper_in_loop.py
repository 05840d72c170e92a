# Modelled on eguneys/lheadsup-training's TF2 trainer (an lczero fork):
# the loop over batch splits merges each split's gradients into the sum,
# and then, indented one level too deep, sets the learning rate to lr / N
# and calls the apply helper on every split (GAC102). Dividing the learning
# rate by N with plain momentum SGD is the same step as the mean's: no
# GAC101 for the undivided sum.
import tensorflow as tf


class TFProcess(object):
    def __init__(self, model, train_iter, lr):
        self.model, self.train_iter, self.lr = model, train_iter, lr
        self.active_lr = tf.Variable(0.01, trainable=False)
        self.optimizer = tf.keras.optimizers.SGD(learning_rate=lambda: self.active_lr,
                                                 momentum=0.9, nesterov=True)

    @tf.function()
    def split_gradients(self, batch):
        x, y = batch
        with tf.GradientTape() as tape:
            predicted = self.model(x, training=True)
            total = self.model.loss(y, predicted)
        return tape.gradient(total, self.model.trainable_weights)

    def merge_grads(self, grads, new_grads):
        return [tf.math.add(a, b) for a, b in zip(grads, new_grads)]

    def apply_grads(self, grads, splits):
        clipped, norm = tf.clip_by_global_norm(grads, 10000.0 * splits)
        self.optimizer.apply_gradients(list(zip(clipped, self.model.trainable_weights)))
        return norm

    def train_step(self, batch_splits):
        summed = None
        for _ in range(batch_splits):
            new_grads = self.split_gradients(next(self.train_iter))
            summed = new_grads if summed is None else self.merge_grads(summed, new_grads)
            self.active_lr.assign(self.lr / batch_splits)
            norm = self.apply_grads(summed, batch_splits)  # <- GAC102
        return norm
