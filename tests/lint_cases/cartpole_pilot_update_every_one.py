# Modelled on a Python 2 CartPole REINFORCE script (a "pilot" agent, TF1
# session, gradBuffer style): each episode's gradients are fetched and
# added to a NumPy buffer, which is fed to the gradient placeholders when
# `episode_num % UPDATE_FREQUENCY == 0 and episode_num != 0`, with
# UPDATE_FREQUENCY = 1. Episode 0 is added and not applied: the first update
# holds two episodes, every later one holds one (GAC109). With cycles of one
# episode there is nothing to divide.
import numpy as np
import tensorflow as tf

UPDATE_FREQUENCY = 1
MAX_EPISODES = 5000


def train(env, pilot, run_episode):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        episode_num = 0
        gradient_buffer = sess.run(tf.trainable_variables())
        for i, gradient in enumerate(gradient_buffer):
            gradient_buffer[i] = gradient * 0
        while episode_num < MAX_EPISODES:
            feed_dict = run_episode(env, sess, pilot)
            gradients = sess.run(pilot.gradients, feed_dict=feed_dict)
            for i, gradient in enumerate(gradients):
                gradient_buffer[i] += gradient
            if episode_num % UPDATE_FREQUENCY == 0 and episode_num != 0:  # <- GAC109
                sess.run(pilot.update_batch,
                         feed_dict=dict(zip(pilot.gradient_holder, gradient_buffer)))
                for i, gradient in enumerate(gradient_buffer):
                    gradient_buffer[i] = gradient * 0
            episode_num += 1
    return np.asarray(gradient_buffer)
