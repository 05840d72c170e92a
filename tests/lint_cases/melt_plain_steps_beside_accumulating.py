# Modelled on chenghuige's melt utilities (a Keras model whose train_step
# picks one of several step methods, public, repository unknown): the
# plain steps count ``self.step`` for their logging and apply their own
# gradients; only the accumulating step's Python counter decides a cycle
# (GAC105 there; its ``>`` test would give cycles of N + 1, and the trace
# fixes it once, so it applies on every call or never: GAC109).
import tensorflow as tf


class Model(tf.keras.Model):
    def __init__(self, n_gradients=1, **kwargs):
        super(Model, self).__init__(**kwargs)
        self.step = 0
        self.n_gradients = n_gradients
        self.n_acum_step = 0
        self.sums = None

    def train_step(self, data):
        if self.n_gradients > 1:
            return self.acc_train_step(data)
        return self.basic_train_step(data)

    def basic_train_step(self, data):
        self.step += 1
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
        return {"loss": loss}

    def acc_train_step(self, data):
        x, y = data
        if self.sums is None:
            self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                         for v in self.trainable_variables]
        self.n_acum_step += 1  # <- GAC105
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        for s, g in zip(self.sums, grads):
            s.assign_add(g / self.n_gradients)
        if self.n_acum_step > self.n_gradients:  # <- GAC109
            self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))
            for s in self.sums:
                s.assign(tf.zeros_like(s))
            self.n_acum_step = 0
        return {"loss": loss}
