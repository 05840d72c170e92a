# Modelled on sadimanna/Gradient_Accumulation's tf.keras port of a Keras
# accumulating optimizer wrapper: get_updates "advances" the count with
# `self.iterations = tf.add(self.iterations, 1)`, a new tensor that
# assigns nothing, so the gate built on the count stays true and the
# wrapped optimizer applies at full rate on every micro-batch.
import tensorflow as tf
from tensorflow.keras.optimizers import Optimizer


class AccumulatingWrapper(Optimizer):
    def __init__(self, optimizer, steps_per_update=4, **kwargs):
        super(AccumulatingWrapper, self).__init__(**kwargs)
        self.optimizer = optimizer
        self.steps_per_update = steps_per_update
        self.iterations = tf.Variable(0, dtype="int64", name="iterations")
        self.apply_now = tf.equal(self.iterations % self.steps_per_update, 0)  # <- GAC109

    def get_gradients(self, loss, params):
        return [s / self.steps_per_update for s in self.accum_grads]

    def get_updates(self, loss, params):
        self.iterations = tf.add(self.iterations, 1)
        self.accum_grads = [tf.zeros(p.shape, dtype=p.dtype) for p in params]
        grads = tf.gradients(loss, params)
        self.updates = [self.iterations]
        for g, acc in zip(grads, self.accum_grads):
            self.updates.append(tf.cond(self.apply_now, lambda: g, lambda: acc + g))
        self.updates.extend(self.optimizer.get_updates(loss, params)[1:])
        return self.updates
