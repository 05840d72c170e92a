# Modelled on GeorgiosKyritsis/squad's accumulating Keras model: train_step
# sums into variables and applies through tf.cond when the count reaches N;
# fit runs several epochs with no callback that applies the rest, so each
# epoch's last partial cycle is carried into the next (the last is lost).
import tensorflow as tf


class Accumulating(tf.keras.Model):
    def setup(self, n_micro):
        self.n_micro = tf.constant(n_micro)
        self.count = tf.Variable(0, trainable=False)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in self.trainable_variables]

    def train_step(self, data):
        self.count.assign_add(1)
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True)) / tf.cast(self.n_micro, tf.float32)
        for s, g in zip(self.sums, tape.gradient(loss, self.trainable_variables)):
            s.assign_add(g)
        tf.cond(tf.equal(self.count, self.n_micro), self.apply_sums, lambda: None)  # <- GAC110
        return {"loss": loss}

    def apply_sums(self):
        self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))
        self.count.assign(0)
        for s in self.sums:
            s.assign(tf.zeros_like(s))


def train(model, dataset, epochs):
    model.compile(optimizer="adam", loss="mse")
    model.fit(dataset, epochs=epochs)
