# Modelled on FinnWeng/detection's accumulating Keras model: meaning to take
# the mean, it adds the sum divided by N to the sum itself (the applied
# gradient is (1 + 1/N) times the sum, not the mean).
import tensorflow as tf


class Accumulating(tf.keras.Model):
    def __init__(self, n_micro, *args, **kwargs):
        super(Accumulating, self).__init__(*args, **kwargs)
        self.n_micro = n_micro
        self.seen = tf.Variable(0, trainable=False)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in self.trainable_variables]

    def apply_sums(self):
        for i in range(len(self.sums)):
            self.sums[i].assign_add(self.sums[i] / float(self.n_micro))
        self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))  # <- GAC101
        self.seen.assign(0)
        for s in self.sums:
            s.assign(tf.zeros_like(s))

    def train_step(self, data):
        images, labels = data
        with tf.GradientTape() as tape:
            predictions = self(images, training=True)
            loss = self.compiled_loss(labels, predictions)
        for i, grad in enumerate(tape.gradient(loss, self.trainable_variables)):
            self.sums[i].assign_add(grad)
        self.seen.assign_add(1)
        tf.cond(self.seen >= self.n_micro, self.apply_sums, lambda: None)  # <- GAC110
        return {"loss": loss}
