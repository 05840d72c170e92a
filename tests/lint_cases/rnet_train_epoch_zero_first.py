# Modelled on a TF1 R-Net reading-comprehension model (public, repository
# unknown): its train_epoch method, called once per epoch from elsewhere,
# runs zero_ops first, then accumulates every batch and applies every N
# (counted by the batch index from range); nothing is applied after the
# loop, so each epoch's last partial cycle is zeroed by the next call.
import tensorflow as tf


class Model(object):
    def build(self, loss, learning_rate, interval):
        self.interval = interval
        tvars = tf.compat.v1.trainable_variables()
        sums = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                for v in tvars]
        grads = tf.gradients(loss, tvars)
        self.zero_ops = [s.assign(tf.zeros_like(s)) for s in sums]
        self.accum_ops = [s.assign_add(g) for s, g in zip(sums, grads)]
        optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate)
        self.apply_grads = optimizer.apply_gradients(
            [(s / interval, v) for s, v in zip(sums, tvars)])

    def train_epoch(self, session, batches, num_batches):
        session.run(self.zero_ops)
        for batch_id in range(num_batches):  # <- GAC110
            session.run(self.accum_ops, feed_dict=next(batches))
            if (batch_id + 1) % self.interval == 0:
                session.run(self.apply_grads)
                session.run(self.zero_ops)
