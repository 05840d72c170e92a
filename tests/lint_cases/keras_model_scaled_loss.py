# Modelled on the same Keras train_step override in its later, fixed form:
# the loss is divided by the number of micro-batches before the gradient, so
# the applied sum is the big batch's mean. Clean.
import tensorflow as tf


class AccumulatingModel(tf.keras.Model):
    def __init__(self, accum_steps, *args, **kwargs):
        super(AccumulatingModel, self).__init__(*args, **kwargs)
        self.accum_steps = tf.constant(accum_steps, dtype=tf.int32)
        self.seen = tf.Variable(0, dtype=tf.int32, trainable=False)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in self.trainable_variables]

    def train_step(self, data):
        self.seen.assign_add(1)
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
            loss = loss / tf.cast(self.accum_steps, tf.float32)
        grads = tape.gradient(loss, self.trainable_variables)
        for s, g in zip(self.sums, grads):
            s.assign_add(g)
        tf.cond(tf.equal(self.seen, self.accum_steps), self.apply_sums, lambda: None)
        return {"loss": loss}

    def apply_sums(self):
        self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))
        self.seen.assign(0)
        for s in self.sums:
            s.assign(tf.zeros_like(s))
