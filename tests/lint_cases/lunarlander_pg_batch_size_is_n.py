# Modelled on a LunarLander REINFORCE agent (TF1 graph, NumPy gradient
# buffer): its loss is divided by batch_size, the number of episodes per
# update, which is also the N of its cycle test; the buffer sums the
# episodes' gradients and is fed to the apply as it is. The division is by
# N, not the micro-batch's own size: no GAC101. The episode count starts at
# 0 and the test excludes it: the first update holds N + 1 episodes (GAC109).
import numpy as np
import tensorflow as tf

batch_size = 10


class Agent(object):
    def __init__(self, n_in, n_out):
        self.states = tf.placeholder(tf.float32, [None, n_in])
        self.actions = tf.placeholder(tf.int32, [None])
        self.rewards_holder = tf.placeholder(tf.float32, [None])
        logits = tf.layers.dense(self.states, n_out)
        taken = tf.reduce_sum(tf.nn.softmax(logits) * tf.one_hot(self.actions, n_out), axis=1)
        loss = -tf.reduce_sum(tf.log(taken) * self.rewards_holder) / batch_size
        self.train_vars = tf.trainable_variables()
        self.gradients = tf.gradients(loss, self.train_vars)
        self.holders = [tf.placeholder(tf.float32) for _ in self.train_vars]
        self.update = tf.train.AdamOptimizer(1e-2).apply_gradients(
            zip(self.holders, self.train_vars))


def train(sess, agent, run_episode, episodes):
    grad_buffer = [np.zeros(v.shape.as_list()) for v in agent.train_vars]
    episode_number = 0
    while episode_number < episodes:
        feed = run_episode(sess, agent)
        for i, g in enumerate(sess.run(agent.gradients, feed_dict=feed)):
            grad_buffer[i] += g
        if episode_number % batch_size == 0 and episode_number != 0:  # <- GAC109
            sess.run(agent.update, feed_dict=dict(zip(agent.holders, grad_buffer)))
            grad_buffer = [g * 0 for g in grad_buffer]
        episode_number += 1
