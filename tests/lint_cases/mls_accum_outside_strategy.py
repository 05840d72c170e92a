# Modelled on CypherHK/MLS-A2's part2_cloud_rest_only.py: one script times a
# MirroredStrategy run of a plain model and, outside the strategy's scope, an
# accumulating train_step model. The tf.cond around the second model's
# apply_gradients never meets a replica (no GAC111 there); its sum is still
# applied undivided (GAC101). A second accumulating model, built by a helper
# called under the scope, does run in replica context (GAC111).
import tensorflow as tf
from tensorflow import keras


class SummingModel(keras.Model):
    def __init__(self, inner, accum_steps=4):
        super().__init__()
        self.inner = inner
        self.accum_steps = accum_steps
        self.step = tf.Variable(0, trainable=False)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in inner.trainable_variables]

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self.inner(x, training=True))
        grads = tape.gradient(loss, self.inner.trainable_variables)
        for s, g in zip(self.sums, grads):
            s.assign_add(g)
        self.step.assign_add(1)

        def _apply():
            self.optimizer.apply_gradients(zip(self.sums, self.inner.trainable_variables))  # <- GAC101
            for s in self.sums:
                s.assign(tf.zeros_like(s))
            return 0

        tf.cond(tf.equal(self.step % self.accum_steps, 0), _apply, lambda: 0)  # <- GAC110
        return {"loss": loss}


class MeanModel(keras.Model):
    def __init__(self, inner, accum_steps=4):
        super().__init__()
        self.inner = inner
        self.accum_steps = accum_steps
        self.step = tf.Variable(0, trainable=False)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in inner.trainable_variables]

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self.inner(x, training=True)) / self.accum_steps
        grads = tape.gradient(loss, self.inner.trainable_variables)
        for s, g in zip(self.sums, grads):
            s.assign_add(g)
        self.step.assign_add(1)

        def _apply():
            self.optimizer.apply_gradients(zip(self.sums, self.inner.trainable_variables))
            for s in self.sums:
                s.assign(tf.zeros_like(s))
            return 0

        tf.cond(tf.equal(self.step % self.accum_steps, 0), _apply, lambda: 0)  # <- GAC111
        return {"loss": loss}


def build_cnn():
    return keras.Sequential([keras.layers.Conv2D(8, 3), keras.layers.Flatten(),
                             keras.layers.Dense(10)])


def build_mean_model():
    return MeanModel(build_cnn())


def main(train, epochs):
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        plain = build_cnn()
        plain.compile("adam", "sparse_categorical_crossentropy")
        replicated = build_mean_model()
        replicated.compile(keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy")
    plain.fit(train, epochs=epochs)
    replicated.fit(train, epochs=epochs)

    accumulating = SummingModel(build_cnn(), accum_steps=4)
    accumulating.compile(keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy")
    accumulating.fit(train, epochs=epochs)
