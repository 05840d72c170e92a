# Modelled on an OpenKE Config class ported to Horovod (TF1 session, public,
# repo unknown): the graph that accumulates also builds a barrier,
# hvd.allreduce of a random scalar, which syncs the workers and reduces no
# gradient; the sums are all-reduced (built in the same function as the
# accumulation, run once per effective step). Clean: two false GAC104
# before.
import horovod.tensorflow as hvd
import tensorflow as tf


class Config(object):
    def init(self, model, sync_after=4):
        self.sync_after = sync_after
        self.optimizer = tf.train.GradientDescentOptimizer(0.1)
        self.trainable_vars = tf.trainable_variables()
        self.grad_pairs = self.optimizer.compute_gradients(model.loss, self.trainable_vars)
        self.accumulators = [tf.Variable(tf.zeros_like(v), trainable=False)
                             for v in self.trainable_vars]
        self.counter = tf.Variable(0.0, trainable=False)
        self.accumulate_ops = [a.assign_add(g) for a, (g, v) in zip(self.accumulators, self.grad_pairs)]
        self.accumulate_ops.append(self.counter.assign_add(1.0))
        self.zero_ops = [a.assign(tf.zeros_like(v)) for a, v in zip(self.accumulators, self.trainable_vars)]
        self.zero_ops.append(self.counter.assign(0.0))
        self.barrier = hvd.allreduce(tf.random_normal(shape=[1]))
        averaged = [(hvd.allreduce(a / self.counter), v)
                    for a, (g, v) in zip(self.accumulators, self.grad_pairs)]
        self.train_op = self.optimizer.apply_gradients(averaged)

    def train_step(self, sess, feeds):
        sess.run(self.zero_ops)
        for i in range(self.sync_after):
            sess.run(self.accumulate_ops, feed_dict=feeds[i])
        sess.run(self.barrier)
        sess.run(self.train_op)
