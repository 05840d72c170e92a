# Modelled on andreped/GradientAccumulator's Keras model wrapper with
# adaptive gradient clipping: each micro-batch is clipped before it is
# accumulated (the big batch clips its mean once).
import tensorflow as tf


class GAModel(tf.keras.Model):
    def __init__(self, accum_steps, clip_factor, *args, **kwargs):
        super(GAModel, self).__init__(*args, **kwargs)
        self.accum_steps = accum_steps
        self.clip_factor = clip_factor
        self.seen = tf.Variable(0, dtype=tf.int32, trainable=False)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in self.trainable_variables]

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True)) / self.accum_steps
        gradients = tape.gradient(loss, self.trainable_variables)
        gradients = adaptive_clip_grad(self.trainable_variables, gradients,  # <- GAC106
                                       clip_factor=self.clip_factor)
        for s, g in zip(self.sums, gradients):
            s.assign_add(g)
        self.seen.assign_add(1)
        tf.cond(tf.equal(self.seen, self.accum_steps), self.apply_sums, lambda: None)  # <- GAC110
        return {"loss": loss}

    def apply_sums(self):
        self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))
        self.seen.assign(0)
