# Modelled on a sign-language CNN+LSTM trainer (Keras train_step, public,
# repo unknown): a callback sets Python bool flags on the model, and the
# traced train_step reads them to decide whether to apply. fit traces
# train_step once: the flags' values then fix the branch for good, so the
# apply runs on every batch or never (GAC109); the count is Python state
# too (GAC105).
import tensorflow as tf


class ApplyEveryN(tf.keras.callbacks.Callback):
    def __init__(self, steps):
        super(ApplyEveryN, self).__init__()
        self.steps = steps

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % self.steps == 0:
            self.model.apply_now = True


class AccumulatingModel(tf.keras.Model):
    def __init__(self, inner, steps=4):
        super(AccumulatingModel, self).__init__()
        self.inner = inner
        self.steps = steps
        self.apply_now = False
        self.count = 0
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in inner.trainable_variables]

    def call(self, x, training=None):
        return self.inner(x, training=training)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        for s, g in zip(self.sums, grads):
            s.assign_add(g / self.steps)
        self.count += 1  # <- GAC105
        if self.apply_now:  # <- GAC109
            self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))
            for s in self.sums:
                s.assign(tf.zeros_like(s))
            self.apply_now = False
        return {"loss": loss}


model = AccumulatingModel(tf.keras.Sequential([tf.keras.layers.Dense(10)]))
model.compile(optimizer="adam", loss="mse")
model.fit(dataset, epochs=5, callbacks=[ApplyEveryN(4)])
