# Modelled on a personal Kaggle TF2 trainer base (a TFModel class): the step
# takes the gradients and clips them in calc_grads, fit_batch returns them,
# _fit_batch returns fit_batch's (or, under a strategy, a helper's) result,
# and the Python epoch loop adds each micro-batch's clipped gradients,
# divided by N, into a list it applies every N batches. The clip is three
# returns away from the sums, on every micro-batch (GAC106); the mean is
# right. The count restarts with each epoch's enumerate, the sums do not:
# an epoch's last partial cycle is carried into the next (GAC110).
import tensorflow as tf


class TFModel(object):
    def __init__(self, cfg, model, opt, strategy=None):
        self.cfg, self.model, self._opt, self.strategy = cfg, model, opt, strategy
        self._accumulated = None
        self._batch_id = 0
        self._step_fn = None

    def calc_grads(self, tape, variables, loss):
        grads = tape.gradient(loss, variables)
        if self.cfg.gradient_clip is not None:
            grads, _ = tf.clip_by_global_norm(grads, self.cfg.gradient_clip)  # <- GAC106
        return grads

    def fit_batch(self, batch):
        x, y = batch
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
        grads = self.calc_grads(tape, self.model.trainable_variables, loss)
        return grads, loss

    def _fit_batch_distributed(self, batch):
        if self._step_fn is None:
            self._step_fn = tf.function(self.fit_batch)
        grads, loss = self.strategy.run(self._step_fn, args=(batch,))
        return grads, loss

    def _fit_batch(self, batch):
        if self.strategy is not None:
            return self._fit_batch_distributed(batch)
        return self.fit_batch(batch)

    def accumulate_and_apply(self, grads):
        n = self.cfg.accumulated_batch_size
        if self._accumulated is None:
            self._accumulated = [g / n for g in grads]
        else:
            for i, g in enumerate(grads):
                self._accumulated[i] += g / n
        if (self._batch_id + 1) % n == 0:
            self._opt.apply_gradients(zip(self._accumulated, self.model.trainable_variables))
            self._accumulated = None

    def fit(self, dataset, epochs):
        for _ in range(epochs):  # <- GAC110
            for i, batch in enumerate(dataset):
                self._batch_id = i
                grads, loss = self._fit_batch(batch)
                self.accumulate_and_apply(grads)
