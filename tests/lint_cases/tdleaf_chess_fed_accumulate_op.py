# Modelled on a TD-leaf(lambda) chess agent (TF1 graph and session, public,
# repository not named by the index): each episode's eligibility-trace
# updates are summed in NumPy, fed through placeholders to an op named
# `update_grad_accums_op` that adds them to tf.Variable sums, and every 100
# episodes an apply op of the sums / 100 runs. The fed op only adds to the
# sums, it applies nothing: clean.
import numpy as np
import tensorflow as tf


class TDLeafAgent(object):
    def __init__(self, model, sess, episodes_per_update=100):
        self.model, self.sess = model, sess
        self.opt = tf.train.AdamOptimizer(1e-3)
        variables = model.trainable_variables
        self.grad_accums = [tf.Variable(np.zeros(v.shape), trainable=False, dtype=tf.float32)
                            for v in variables]
        self.grad_s = [tf.placeholder(tf.float32, shape=v.get_shape()) for v in variables]
        self.update_grad_accums_op = tf.group(*[
            tf.assign_add(a, g) for a, g in zip(self.grad_accums, self.grad_s)])
        self.apply_grads = self.opt.apply_gradients(
            [(a / episodes_per_update, v) for a, v in zip(self.grad_accums, variables)])
        self.reset_op = tf.group(*[tf.assign(a, tf.zeros_like(a)) for a in self.grad_accums])
        self.grads = tf.gradients(model.value, variables)

    def play_episode(self, episode, positions, lamda=0.7):
        traces = [np.zeros(v.shape) for v in self.model.trainable_variables]
        sums = [np.zeros(v.shape) for v in self.model.trainable_variables]
        values, previous = [], None
        for features in positions:
            value, grads = self.sess.run([self.model.value, self.grads],
                                         feed_dict={self.model.inputs: features})
            values.append(value)
            if previous is not None:
                delta = values[-1] - values[-2]
                for grad, trace, total in zip(previous, traces, sums):
                    trace *= lamda
                    trace += grad
                    total -= delta * trace
            previous = grads
        self.sess.run(self.update_grad_accums_op,
                      feed_dict={g: total for g, total in zip(self.grad_s, sums)})
        if episode % 100 == 99:
            self.sess.run(self.apply_grads)
            self.sess.run(self.reset_op)
