# Modelled on TanyaChutani/Gradient-Accumulation-Tensorflow2.x (model.py): a
# Keras model whose train_step applies under tf.cond(tf.equal(self.steps,
# N)), where nothing ever advances self.steps (GAC109: the apply never runs),
# and whose reset rebinds the variable to the Python int 0 inside the traced
# step (GAC105: .assign(0) resets it). The sums are applied undivided too
# (GAC101). RightModel below advances and resets its counter as it should.
import tensorflow as tf


class WrongModel(tf.keras.Model):
    def __init__(self, num_gradients=16):
        super(WrongModel, self).__init__()
        self.num_gradients = tf.constant(num_gradients, tf.int32)
        self.steps = tf.Variable(tf.constant(0, dtype=tf.int32), trainable=False)
        self.dense = tf.keras.layers.Dense(10)

    def build(self, input_shape):
        super(WrongModel, self).build(input_shape)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in self.trainable_variables]

    def call(self, x):
        return self.dense(x)

    def reset(self):
        self.steps = 0  # <- GAC105
        for s in self.sums:
            s.assign(tf.zeros_like(s))

    def apply_sums(self):
        self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))  # <- GAC101
        self.reset()

    @tf.function
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.compiled_loss(y, self(x, training=True)))
        grads = tape.gradient(loss, self.trainable_variables)
        for i in range(len(self.sums)):
            self.sums[i].assign_add(grads[i])
        tf.cond(tf.equal(self.steps, self.num_gradients), self.apply_sums, lambda: None)  # <- GAC109
        return {"loss": loss}


class RightModel(tf.keras.Model):
    def __init__(self, num_gradients=16):
        super(RightModel, self).__init__()
        self.num_gradients = tf.constant(num_gradients, tf.int32)
        self.steps = tf.Variable(tf.constant(0, dtype=tf.int32), trainable=False)
        self.dense = tf.keras.layers.Dense(10)

    def build(self, input_shape):
        super(RightModel, self).build(input_shape)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in self.trainable_variables]

    def call(self, x):
        return self.dense(x)

    def reset(self):
        self.steps.assign(0)
        for s in self.sums:
            s.assign(tf.zeros_like(s))

    def apply_sums(self):
        n = tf.cast(self.num_gradients, tf.float32)
        self.optimizer.apply_gradients(zip([s / n for s in self.sums], self.trainable_variables))
        self.reset()

    @tf.function
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.compiled_loss(y, self(x, training=True)))
        grads = tape.gradient(loss, self.trainable_variables)
        for i in range(len(self.sums)):
            self.sums[i].assign_add(grads[i])
        self.steps.assign_add(1)
        tf.cond(tf.equal(self.steps, self.num_gradients), self.apply_sums, lambda: None)
        return {"loss": loss}
