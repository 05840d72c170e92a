# Modelled on a TF1 Pong policy-gradient script (in the style of the
# widely copied Karpathy / Juliani agents, public, repository unknown):
# the episode counter starts at 1 and is advanced when an episode ends,
# before that episode's gradients are added and before the
# ``episode_number % N == 0`` test, so the first apply sums N - 1 episodes.
import numpy as np
import tensorflow as tf


def train(sess, env, policy, batch_size, episodes):
    tvars = tf.compat.v1.trainable_variables()
    holders = [tf.compat.v1.placeholder(tf.float32, name="grad%d" % i) for i in range(len(tvars))]
    grads_op = tf.gradients(policy.loss, tvars)
    update = tf.compat.v1.train.AdamOptimizer(1e-3).apply_gradients(zip(holders, tvars))
    buffer = [np.zeros_like(v) for v in sess.run(tvars)]
    episode_number = 1
    while episode_number <= episodes:
        xs, ys, rewards = policy.play(sess, env)
        episode_number += 1
        grads = sess.run(grads_op, feed_dict=policy.feed(xs, ys, rewards))
        for i, g in enumerate(grads):
            buffer[i] += g / batch_size
        if episode_number % batch_size == 0:
            sess.run(update, feed_dict=dict(zip(holders, buffer)))  # <- GAC109
            buffer = [b * 0 for b in buffer]
