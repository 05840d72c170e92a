# Modelled on bytedance/neurst's GradAccumKerasModel: the file defines its
# own accumulator class, which multiplies each micro-batch's gradients by
# 1 / accum_steps as it adds them; the Keras train_step calls it and
# applies its `.gradients` as they are. They are already the mean: no
# GAC101.
import tensorflow as tf


class ScaledAccumulator(object):
    def __init__(self, accum_steps):
        self._sums = []
        self._factor = 1. / accum_steps

    @property
    def gradients(self):
        return [s.value() for s in self._sums]

    def __call__(self, gradients):
        if not self._sums:
            self._sums.extend(tf.Variable(tf.zeros_like(g), trainable=False) for g in gradients)
        for s, g in zip(self._sums, gradients):
            s.assign_add(g * self._factor)

    def reset(self):
        for s in self._sums:
            s.assign(tf.zeros_like(s))


class AccumulatingModel(tf.keras.Model):
    def setup(self, update_cycle):
        self._grad_accumulator = ScaledAccumulator(update_cycle)

    def train_step(self, data, accum_only=False):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        self._grad_accumulator(tape.gradient(loss, self.trainable_variables))
        if not accum_only:  # <- GAC110
            self.optimizer.apply_gradients(
                zip(self._grad_accumulator.gradients, self.trainable_variables))
            self._grad_accumulator.reset()
        return {"loss": loss}
