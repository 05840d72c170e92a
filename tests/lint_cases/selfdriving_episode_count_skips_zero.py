# Modelled on a self-driving REINFORCE script (TF1 session, public, repo
# unknown): the episode count starts at 0 in a while loop and is advanced
# at the end of each episode, after the inner loop of steps that adds the
# episode's gradients and tests `cur_ep % N == 0 and cur_ep != 0`. The
# first update holds episodes 0 to N, N + 1 of them (GAC109).
import numpy as np
import tensorflow as tf

update_frequency = 3
episode_gradient = tf.gradients(loss, tf.trainable_variables())
holders = [tf.placeholder(tf.float32) for _ in episode_gradient]
nn_update = tf.train.AdamOptimizer(1e-3).apply_gradients(zip(holders, tf.trainable_variables()))
cur_ep = 0
with tf.Session() as sess:
    buffer = sess.run(tf.trainable_variables())
    for i, g in enumerate(buffer):
        buffer[i] = g * 0
    while cur_ep < 5000:
        done = False
        while not done:
            episode, done = play(sess)
            if done:
                grads = sess.run(episode_gradient, feed_dict=feed_of(episode))
                for i, g in enumerate(grads):
                    buffer[i] += g / update_frequency
                if cur_ep % update_frequency == 0 and cur_ep != 0:
                    sess.run([nn_update], feed_dict=dict(zip(holders, buffer)))  # <- GAC109
                    for i, g in enumerate(buffer):
                        buffer[i] = g * 0
        cur_ep += 1
