# Modelled on shi510/tensorflow-gradient-accumulation (one commit): the
# micro-step counter starts at 1 and is advanced before the == N test, so a
# cycle holds N - 1 micro-batches.
import tensorflow as tf


class AccumModel(tf.keras.Model):
    def __init__(self, num_accum, **kwargs):
        super(AccumModel, self).__init__(**kwargs)
        self.num_accum = tf.constant(num_accum, dtype=tf.int32)
        self.step_count = tf.Variable(1, dtype=tf.int32, trainable=False)
        self.grad_accum = [tf.Variable(tf.zeros_like(v), trainable=False)
                           for v in self.trainable_variables]

    def accumulate(self, step_grads):
        self.step_count.assign_add(1)
        for i in range(len(step_grads)):
            self.grad_accum[i].assign_add(step_grads[i] / tf.cast(self.num_accum, tf.float32))
        tf.cond(tf.equal(self.step_count, self.num_accum), self.apply_and_reset, lambda: None)  # <- GAC109

    def apply_and_reset(self):
        self.optimizer.apply_gradients(zip(self.grad_accum, self.trainable_variables))
        self.step_count.assign(1)
        for i in range(len(self.grad_accum)):
            self.grad_accum[i].assign(tf.zeros_like(self.grad_accum[i]))
