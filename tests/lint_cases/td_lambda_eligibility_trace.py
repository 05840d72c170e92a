# Modelled on a TD(lambda) critic with eligibility traces (TF2 eager,
# public, repository not named by the index): each step applies the TD
# error times the trace, then decays the trace and adds the new
# gradient, `e = gamma * lambda_ * e + g`. A trace is a decayed sum, not a
# sum of micro-batches to apply once every N: applying it every step is
# the algorithm (clean; no GAC101, no GAC102).
import numpy as np
import tensorflow as tf


class Critic(object):
    def __init__(self, network, gamma=0.99, lambda_=0.9):
        self.critic = network
        self.gamma, self.lambda_ = gamma, lambda_
        self.optimizer = tf.keras.optimizers.SGD(1e-3)
        self.eligibility = [tf.zeros_like(v) for v in network.trainable_variables]

    def learn(self, reward, state, next_state, done):
        with tf.GradientTape() as tape:
            value = self.critic(state)[0, 0]
        grads = tape.gradient(value, self.critic.trainable_variables)
        next_value = np.array(self.critic(next_state)[0, 0])
        td_error = reward + self.gamma * next_value * (1 - int(done)) - np.array(value)
        step = [-td_error * e for e in self.eligibility]
        self.optimizer.apply_gradients(zip(step, self.critic.trainable_variables))
        self.eligibility = [self.gamma * self.lambda_ * e + g
                            for e, g in zip(self.eligibility, grads)]
