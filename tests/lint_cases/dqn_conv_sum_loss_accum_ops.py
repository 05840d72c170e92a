# Modelled on a TF1 DQN convolutional network class (slim layers, Atari
# frames): besides its plain minimize op, __init__ builds accumulate, apply
# and reset ops over accumulator variables fed by compute_gradients. Its
# loss is a reduce_sum of squared TD errors over the batch, a sum by design,
# so the sum of the micro-batches' gradients is the big batch's: applying
# the accumulators undivided is right. No finding.
import tensorflow as tf

slim = tf.contrib.slim


class QNetwork(object):
    def __init__(self, frames, n_actions, learning_rate):
        self.screen = tf.placeholder(tf.float32, [None, 84, 84, frames])
        self.action = tf.placeholder(tf.int32, [None])
        self.target_q = tf.placeholder(tf.float32, [None])
        hidden = slim.fully_connected(slim.flatten(self.screen), 256)
        self.q = slim.fully_connected(hidden, n_actions, activation_fn=None)
        taken = tf.reduce_sum(self.q * tf.one_hot(self.action, n_actions), axis=1)
        self.loss = tf.reduce_sum(tf.square(self.target_q - taken))

        self.weights = tf.trainable_variables()
        self.opt = tf.train.AdamOptimizer(learning_rate)
        self.train = self.opt.minimize(self.loss)

        self.accumulators = [tf.Variable(tf.zeros_like(w.initialized_value()), trainable=False)
                             for w in self.weights]
        self.grads_and_vars = self.opt.compute_gradients(self.loss, self.weights)
        self.accumulate_ops = [self.accumulators[i].assign_add(gv[0])
                               for i, gv in enumerate(self.grads_and_vars)]
        self.apply_op = self.opt.apply_gradients(
            [(self.accumulators[i], gv[1]) for i, gv in enumerate(self.grads_and_vars)])
        self.reset_ops = [a.assign(tf.zeros_like(a)) for a in self.accumulators]
