# Modelled on a Breakout policy-gradient script with hand-made features
# (TF1 session, NumPy gradient buffer): the gate `if i % 5 == 0 and i != 0`
# means to count episodes, but the i it reads is the one the loop that adds
# an episode's gradients to the buffer, `for i, grad in enumerate(grads)`,
# left: the last variable's index, the same after every episode, so the
# buffer is applied never or after every episode (GAC109). The buffer is
# applied as a sum, never divided (GAC101), and the episodes after the last
# apply are lost when training ends (GAC110).
import numpy
import tensorflow as tf


def train(session, env, run_episode, gradients, gradient_holders, update_batch, episodes):
    grad_buffer = [numpy.zeros(h.shape.as_list()) for h in gradient_holders]
    for episode in range(episodes):  # <- GAC110
        feed_dict = run_episode(env)
        grads = session.run(gradients, feed_dict=feed_dict)
        for i, grad in enumerate(grads):
            grad_buffer[i] += grad
        if i % 5 == 0 and i != 0:  # <- GAC109
            feed_dict = dict(zip(gradient_holders, grad_buffer))
            session.run(update_batch, feed_dict=feed_dict)  # <- GAC101
            for i, grad in enumerate(grad_buffer):
                grad_buffer[i] = grad * 0
