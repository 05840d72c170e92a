# Modelled on a batch-sampling DQN for CartPole (TF2 eager, a notebook
# exported to .py, public, repository not named by the index): the replay
# buffer is walked one sample at a time, each sample's squared TD error is
# differentiated and added to the sums, which are divided by the count and
# applied once after the loop. But the zero sums are made inside the loop,
# before the add: every pass restarts them, and only the last sample's
# gradient is applied (GAC109).
import numpy as np
import tensorflow as tf


class Agent(object):
    def __init__(self, network, gamma=0.99):
        self.network = network
        self.gamma = gamma
        self.optimizer = tf.keras.optimizers.Adam(1e-4)

    def learn(self, replay):
        seen = 0
        for state, action, reward, following in replay:
            seen += 1
            weights = self.network.trainable_variables
            totals = [tf.zeros_like(w) for w in weights]  # <- GAC109
            with tf.GradientTape() as tape:
                q_now = self.network(np.array([state]))[0][action]
                q_next = tf.reduce_max(self.network(np.array([following])), axis=1)
                td_error = tf.square(reward + self.gamma * q_next - q_now)
            grads = tape.gradient(td_error, weights)
            totals = [t + g for t, g in zip(totals, grads)]
        mean = [t / seen for t in totals]
        self.optimizer.apply_gradients(zip(mean, self.network.trainable_variables))
