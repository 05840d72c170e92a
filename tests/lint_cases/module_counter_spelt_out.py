# Modelled on B01's Keras counter (shi510/tensorflow-gradient-accumulation),
# in a tf.Module variant written for this project: a Python int on self
# advanced as `self.k = self.k + 1` inside a tf.function, so it moves once,
# when tracing.
import tensorflow as tf


class Trainer(tf.Module):
    def __init__(self, model, n):
        super(Trainer, self).__init__()
        self.model = model
        self.n = n
        self.k = 0
        self.opt = tf.keras.optimizers.Adam()
        self.acc = [tf.Variable(tf.zeros_like(v), trainable=False)
                    for v in model.trainable_variables]

    @tf.function
    def __call__(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y)) / self.n
        grads = tape.gradient(loss, self.model.trainable_variables)
        for a, g in zip(self.acc, grads):
            a.assign_add(g)
        self.k = self.k + 1  # <- GAC105
        if self.k == self.n:
            self.opt.apply_gradients(zip(self.acc, self.model.trainable_variables))
            for a in self.acc:
                a.assign(tf.zeros_like(a))
            self.k = 0
