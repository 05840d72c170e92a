# Modelled on a TF1 Leela-Zero style trainer (tfprocess.py; public, repo
# unknown): each micro-batch runs the accumulation op together with an op
# that advances global_step (so the step counts micro-batches), and the
# loop, which runs while n < max_steps or max_steps == 0, advances n before
# it tests n % macrobatch == macrobatch - 1 (the first cycle is one
# micro-batch short).
import tensorflow as tf


class Process(object):
    def __init__(self, session, loss, optimizer, macrobatch, max_steps):
        self.session = session
        self.macrobatch = macrobatch
        self.max_steps = max_steps
        self.global_step = tf.Variable(0, name="global_step", trainable=False)
        tvars = tf.trainable_variables()
        grads = tf.gradients(loss, tvars)
        sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in tvars]
        self.grad_op = tf.group(*[tf.assign_add(s, g) for s, g in zip(sums, grads)])
        self.train_op = optimizer.apply_gradients(
            [(s / macrobatch, v) for s, v in zip(sums, tvars)])
        self.clear_op = tf.group(*[s.assign(tf.zeros_like(s)) for s in sums])
        self.step_op = tf.assign_add(self.global_step, 1)
        self.loss = loss

    def measure(self, feed):
        ops = [self.loss]
        ops += [self.grad_op, self.step_op]
        return self.session.run(ops, feed_dict=feed)  # <- GAC107

    def process(self, batches):
        n = 0
        while n < self.max_steps or self.max_steps == 0:
            n += 1
            self.measure(next(batches))
            if n % self.macrobatch == (self.macrobatch - 1):
                self.session.run([self.train_op])  # <- GAC109
                self.session.run([self.clear_op])
