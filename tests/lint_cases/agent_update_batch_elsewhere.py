# Modelled on a TF1 reinforcement-learning agent's training loop (public,
# repo unknown): the agent's update op and gradient placeholders are built
# in another file; this one sums each episode's gradients (of a mean loss)
# in a NumPy buffer and feeds the buffer to the update op every
# update_frequency episodes, undivided.
import numpy as np


class Trainer(object):
    def __init__(self, sess, agent, update_frequency=5):
        self.sess = sess
        self.agent = agent
        self.update_frequency = update_frequency
        self.grad_buffer = [np.zeros_like(v) for v in sess.run(agent.variables)]

    def learn(self, episode, states, actions, returns):
        feed = {self.agent.state_in: np.vstack(states), self.agent.action_holder: actions,
                self.agent.reward_holder: returns}
        grads = self.sess.run(self.agent.gradients, feed_dict=feed)
        for idx, grad in enumerate(grads):
            self.grad_buffer[idx] += grad
        if episode % self.update_frequency == 0 and episode != 0:
            feed = dict(zip(self.agent.gradient_holders, self.grad_buffer))
            self.sess.run(self.agent.update_batch, feed_dict=feed)  # <- GAC101
            for idx, grad in enumerate(self.grad_buffer):
                self.grad_buffer[idx] = grad * 0
