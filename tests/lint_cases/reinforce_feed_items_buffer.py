# Modelled on a tflearn REINFORCE agent (TF1 session, public, repo
# unknown): each episode's gradients of a mean loss are added to a NumPy
# buffer, and the update feeds the buffer to the apply op's placeholders
# through a feed_dict filled item by item. The buffer holds the sum of
# several episodes' gradients, applied undivided (GAC101).
import numpy as np
import tensorflow as tf


class PolicyNet(object):
    def __init__(self, loss, lr=1e-2):
        self.sess = tf.Session()
        self.params = tf.trainable_variables()
        self.gradients = tf.gradients(loss, self.params)
        self.holders = [tf.placeholder(tf.float32) for _ in self.gradients]
        self.update = tf.train.AdamOptimizer(lr).apply_gradients(zip(self.holders, self.params))
        self.buffer = [np.zeros(p.get_shape().as_list()) for p in self.params]

    def update_params(self):
        feed_dict = {}
        for i, holder in enumerate(self.holders):
            feed_dict[self.holders[i]] = self.buffer[i]
        self.sess.run(self.update, feed_dict=feed_dict)  # <- GAC101
        for i, grad in enumerate(self.buffer):
            self.buffer[i] = grad * 0

    def accumulate_gradients(self, feed):
        gradients = self.sess.run(self.gradients, feed_dict=feed)
        for i, grad in enumerate(gradients):
            self.buffer[i] += grad


def train(agent, episodes, every=5):
    for episode in range(1, episodes + 1):
        agent.accumulate_gradients(run_episode(agent))
        if episode % every == 0:
            agent.update_params()
