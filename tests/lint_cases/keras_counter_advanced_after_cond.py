# Modelled on shi510/tensorflow-gradient-accumulation's Keras model, in the
# variant written for this project: the counter is made 0 and advanced after
# the tf.cond that tests it, so the first call applies after one micro-batch.
import tensorflow as tf


class AccModel(tf.keras.Model):
    def __init__(self, steps, **kwargs):
        super(AccModel, self).__init__(**kwargs)
        self.steps = steps
        self.counter = tf.Variable(0, trainable=False)
        self.sums = None

    def build(self, shape):
        super(AccModel, self).build(shape)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in self.trainable_variables]

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True)) / self.steps
        grads = tape.gradient(loss, self.trainable_variables)
        for s, g in zip(self.sums, grads):
            s.assign_add(g)
        tf.cond(tf.equal(self.counter % self.steps, 0), self._apply, lambda: None)  # <- GAC109 GAC110
        self.counter.assign_add(1)
        return {"loss": loss}

    def _apply(self):
        self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))
        for s in self.sums:
            s.assign(tf.zeros_like(s))
