# Modelled on a text-adventure REINFORCE trainer (TF1 session, public, repo
# unknown): each episode's gradients, fetched with sess.run, are added to a
# NumPy buffer; the update is fed the buffer when `episode % N == 0 and
# step == 1`. `step == 1` is the inner loop's counter, not N == 1 (no path
# without accumulation), and `episode` counts from 0: the first update
# holds no full cycle (GAC109).
import numpy as np
import tensorflow as tf

episode_batch_size = 64

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    gradient_buffer = sess.run(tf.trainable_variables())
    for index, gradient in enumerate(gradient_buffer):
        gradient_buffer[index] = gradient * 0
    for episode in range(10000):
        history = []
        for step in range(1000):
            history.append(env.step(agent.act(sess)))
            if history[-1][2]:
                grads = sess.run(agent.gradients, feed_dict=agent.feed(history))
                for index, gradient in enumerate(grads):
                    gradient_buffer[index] += gradient / episode_batch_size
                break
            if episode % episode_batch_size == 0 and step == 1:  # <- GAC109
                feed = dict(zip(agent.gradients_to_apply, gradient_buffer))
                sess.run(agent.update_gradients, feed_dict=feed)
                for index, gradient in enumerate(gradient_buffer):
                    gradient_buffer[index] = gradient * 0
