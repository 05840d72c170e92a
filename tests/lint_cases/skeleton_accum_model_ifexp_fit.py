# Modelled on a public skeleton-LSTM training script (an AccumModel keras.Model
# with a lazily made accumulator list; its repository could not be pinned,
# search-index read id 27551450205): the model is chosen as
# `base if accum_steps <= 1 else AccumModel(...)`, and fit carries the
# partial cycle of each epoch into the next, since nothing flushes the sums
# or resets the counter at an epoch's end (GAC110, at the gate).
import tensorflow as tf
from tensorflow import keras


class AccumModel(keras.Model):
    def __init__(self, accum_steps=1, **kwargs):
        super().__init__(**kwargs)
        self.accum_steps = int(max(1, accum_steps))
        self._sums = None
        self._step = tf.Variable(0, trainable=False, dtype=tf.int32)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        if self._sums is None:
            self._sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                          for v in self.trainable_variables]
        for s, g in zip(self._sums, grads):
            s.assign_add(g)
        step = self._step.assign_add(1)

        def _apply():
            n = tf.cast(self.accum_steps, self._sums[0].dtype)
            self.optimizer.apply_gradients(zip([s / n for s in self._sums],
                                               self.trainable_variables))
            for s in self._sums:
                s.assign(tf.zeros_like(s))
            return 0

        tf.cond(tf.equal(tf.math.floormod(step, self.accum_steps), 0), _apply, lambda: 0)  # <- GAC110
        return {"loss": loss}


def main(base_model, ds_train, epochs, accum_steps):
    model = base_model if accum_steps <= 1 else AccumModel(accum_steps=accum_steps,
                                                           inputs=base_model.inputs,
                                                           outputs=base_model.outputs)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return model.fit(ds_train, epochs=epochs)
