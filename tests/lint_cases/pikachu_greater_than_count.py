# Modelled on chenghuige/pikachu2's accumulating Keras model: the count is
# a Python attribute (stale once train_step is traced), and even run eagerly
# it is advanced before the test `count > N` and reset to 0 when the sums
# are applied, so every cycle is N + 1 micro-batches.
import tensorflow as tf


class Accumulating(tf.keras.Model):
    def setup(self, n_micro):
        self.n_micro = n_micro
        self.count = 0
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in self.trainable_variables]

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.count += 1  # <- GAC105
        for s, g in zip(self.sums, grads):
            s.assign_add(g)
        self.maybe_apply()
        return {"loss": loss}

    def maybe_apply(self):
        if self.count > self.n_micro:  # <- GAC110 GAC109
            self.optimizer.apply_gradients(
                zip([s / self.count for s in self.sums], self.trainable_variables))
            self.count = 0
            for s in self.sums:
                s.assign(tf.zeros_like(s))
