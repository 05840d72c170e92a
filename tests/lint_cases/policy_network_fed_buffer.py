# Modelled on the widely copied TF1 policy-gradient tutorial network for
# CartPole (public, repo unknown): the gradients of each episode's mean
# loss are fetched into NumPy and summed in a buffer; every batch_size
# episodes the buffer is fed to placeholders that an Adam apply op takes,
# undivided. Episodes are made as the loop goes: nothing is lost when it
# ends.
import numpy as np
import tensorflow as tf


def train(env, policy, total_episodes, batch_size=5):
    tvars = tf.trainable_variables()
    input_y = tf.placeholder(tf.float32, [None, 1])
    advantages = tf.placeholder(tf.float32)
    loglik = tf.log(input_y * (input_y - policy.probability) +
                    (1 - input_y) * (input_y + policy.probability))
    loss = -tf.reduce_mean(loglik * advantages)
    new_grads = tf.gradients(loss, tvars)
    w1_grad = tf.placeholder(tf.float32, name="batch_grad1")
    w2_grad = tf.placeholder(tf.float32, name="batch_grad2")
    batch_grad = [w1_grad, w2_grad]
    update_grads = tf.train.AdamOptimizer(0.01).apply_gradients(zip(batch_grad, tvars))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        grad_buffer = sess.run(tvars)
        for ix, grad in enumerate(grad_buffer):
            grad_buffer[ix] = grad * 0
        episode_number = 1
        while episode_number <= total_episodes:
            xs, ys, rewards = policy.play_episode(env)
            t_grad = sess.run(new_grads, feed_dict={policy.observations: np.vstack(xs),
                                                    input_y: np.vstack(ys),
                                                    advantages: policy.discount(rewards)})
            for ix, grad in enumerate(t_grad):
                grad_buffer[ix] += grad
            if episode_number % batch_size == 0:
                sess.run(update_grads, feed_dict={w1_grad: grad_buffer[0],  # <- GAC101
                                                  w2_grad: grad_buffer[1]})
                for ix, grad in enumerate(grad_buffer):
                    grad_buffer[ix] = grad * 0
            episode_number += 1
