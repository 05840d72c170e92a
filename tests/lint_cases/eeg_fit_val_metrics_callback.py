# Modelled on a windowed-signal classifier trained with Model.fit (TF2,
# Keras train_step, public, repository not named by the index): the model
# sums gradients in variables and applies them under tf.cond every N
# steps of a step variable that fit's epochs never reset. The file's
# callback has an on_epoch_end, but it only predicts on the validation
# set and logs its scores: nothing applies or resets the partial cycle at
# an epoch's end, so it is carried into the next (GAC110, at the cycle's
# test).
import numpy as np
import tensorflow as tf


class AccumModel(tf.keras.Model):
    def __init__(self, accumulate_steps=8, **kwargs):
        super(AccumModel, self).__init__(**kwargs)
        self.accumulate_steps = accumulate_steps
        self._step = tf.Variable(0, dtype=tf.int32, trainable=False)
        self._sums = None

    def train_step(self, data):
        x, y = data
        if self._sums is None:
            self._sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                          for v in self.trainable_variables]
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True)) / self.accumulate_steps
        grads = tape.gradient(loss, self.trainable_variables)
        for s, g in zip(self._sums, grads):
            s.assign_add(g)
        step = self._step.assign_add(1)

        def apply_sums():
            self.optimizer.apply_gradients(zip(self._sums, self.trainable_variables))
            for s in self._sums:
                s.assign(tf.zeros_like(s))
            return 0

        tf.cond(tf.equal(tf.math.floormod(step, self.accumulate_steps), 0),  # <- GAC110
                apply_sums, lambda: 0)
        return {"loss": loss}


class ValMetricsCallback(tf.keras.callbacks.Callback):
    def __init__(self, x_val, y_val):
        super(ValMetricsCallback, self).__init__()
        self.x_val, self.y_val = x_val, y_val

    def on_epoch_end(self, epoch, logs=None):
        probs = np.asarray(self.model.predict(self.x_val, verbose=0)).reshape(-1)
        print("epoch", epoch, "val accuracy", np.mean((probs >= 0.5) == self.y_val))


def train(inputs, outputs, train_ds, x_val, y_val, epochs):
    model = AccumModel(accumulate_steps=8, inputs=inputs, outputs=outputs)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    model.fit(train_ds, epochs=epochs, callbacks=[ValMetricsCallback(x_val, y_val)])
