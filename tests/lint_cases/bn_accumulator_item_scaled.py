# Modelled on a helper accumulator class that also averages BatchNorm
# statistics (TF2, public, repo unknown; itself adapted from a well-known
# accumulator): each gradient of the list is scaled in place by 1/N,
# item by item (grads[i] = self.scale * grads[i]), before it is added;
# a tf.cond applies the sums when the counter reaches N. Clean.
import tensorflow as tf


class ScaledAccumulator(object):
    def __init__(self, model, accum_steps):
        self.model = model
        self.accum_steps = tf.constant(accum_steps, dtype=tf.int32)
        self.counter = tf.Variable(0, dtype=tf.int32, trainable=False)
        self.scale = tf.cast(1.0 / accum_steps, tf.float32)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in model.trainable_variables]

    def begin_step(self):
        self.counter.assign_add(1)

    def accumulate(self, grads, scale=True):
        for i in range(len(self.sums)):
            if grads[i] is not None:
                if scale:
                    grads[i] = self.scale * grads[i]
                self.sums[i].assign_add(grads[i], read_value=False)

    def end_step(self):
        tf.cond(tf.equal(self.counter, self.accum_steps), self._apply, lambda: None)

    def _apply(self):
        self.model.optimizer.apply_gradients(zip(self.sums, self.model.trainable_variables))
        self.counter.assign(0)
        for s in self.sums:
            s.assign(tf.zeros_like(s), read_value=False)
