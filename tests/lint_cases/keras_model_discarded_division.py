# Modelled on the widely copied Keras train_step override (a Model that
# accumulates in train_step and applies in a second method through tf.cond),
# in the variant whose division is an expression statement: its result is
# thrown away and the raw sum is applied.
import tensorflow as tf


class AccumulatingModel(tf.keras.Model):
    def __init__(self, n_steps, *args, **kwargs):
        super(AccumulatingModel, self).__init__(*args, **kwargs)
        self.n_steps = tf.constant(n_steps, dtype=tf.int32)
        self.seen = tf.Variable(0, dtype=tf.int32, trainable=False)
        self.sums = []
        for v in self.trainable_variables:
            self.sums.append(tf.Variable(tf.zeros_like(v), trainable=False))

    def train_step(self, data):
        self.seen.assign_add(1)
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        for i in range(len(self.sums)):
            self.sums[i].assign_add(grads[i])
        tf.cond(tf.equal(self.seen, self.n_steps), self.apply_sums, lambda: None)  # <- GAC110
        return {"loss": loss}

    def apply_sums(self):
        for i in range(len(self.sums)):
            self.sums[i] / tf.cast(self.n_steps, tf.float32)
        self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))  # <- GAC101
        self.seen.assign(0)
        for s in self.sums:
            s.assign(tf.zeros_like(s))
