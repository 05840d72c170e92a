# Modelled on a card-game policy-gradient agent (TF1 session, public, repo
# unknown; comments in Chinese): one method builds the apply op on
# placeholders and returns them with it; the training method unpacks them
# under the same names and feeds the NumPy buffer's elements to them, a
# sum of episodes' gradients, undivided (GAC101). The episode count starts
# at 1 and is advanced before the test: the first update holds N - 1
# episodes (GAC109).
import numpy as np
import tensorflow as tf


class AgentCore(object):
    def __init__(self, batch_size=5):
        self.batch_size = batch_size

    def learn_grad(self, tvars):
        adam = tf.train.AdamOptimizer(learning_rate=0.01)
        w1_grad = tf.placeholder(tf.float32, name="batch_grad1")
        w2_grad = tf.placeholder(tf.float32, name="batch_grad2")
        update_grad = adam.apply_gradients(zip([w1_grad, w2_grad], tvars))
        return w1_grad, w2_grad, update_grad

    def start_train(self, loss, episodes):
        tvars = tf.trainable_variables()
        new_grads = tf.gradients(loss, tvars)
        w1_grad, w2_grad, update_grad = self.learn_grad(tvars)
        with tf.Session() as sess:
            grad_buffer = sess.run(tvars)
            for i, grad in enumerate(grad_buffer):
                grad_buffer[i] = grad * 0
            t = 1
            while t <= episodes:
                feed = play_episode(sess)
                t += 1
                t_grad = sess.run(new_grads, feed_dict=feed)
                for i, grad in enumerate(t_grad):
                    grad_buffer[i] += grad
                if t % self.batch_size == 0:
                    sess.run(update_grad, feed_dict={w1_grad: grad_buffer[0],  # <- GAC101 GAC109
                                                     w2_grad: grad_buffer[1]})
                    for i, grad in enumerate(grad_buffer):
                        grad_buffer[i] = grad * 0
