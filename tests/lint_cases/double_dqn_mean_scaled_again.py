# Modelled on a TF2 Double DQN agent for task offloading (public,
# repository unknown): it walks a replay minibatch one trajectory at a
# time, keeps each trajectory's gradients in a list, and applies
# `1 / batch_size * np.mean(gradients, axis=0)`: the mean over the list
# already divides by the number of trajectories, so the applied step is
# the batch's mean divided by batch_size once more (GAC108).
import numpy as np
import tensorflow as tf


class DoubleDQN(object):
    def __init__(self, model_network, target_network, optimiser, batch_size, discount):
        self.model_network, self.target_network = model_network, target_network
        self.optimiser, self.batch_size, self.discount = optimiser, batch_size, discount
        self.loss_func = tf.keras.losses.Huber()

    def train(self, trajectories):
        variables = self.model_network.trainable_variables
        gradients = []
        for obs, action, reward, next_obs in trajectories:
            with tf.GradientTape() as tape:
                target = np.array(self.model_network(obs))
                best = np.argmax(self.model_network(next_obs))
                target[0][action] = reward + self.discount * self.target_network(next_obs)[0][best]
                loss = self.loss_func(target, self.model_network(obs))
            gradients.append(tape.gradient(loss, variables))
        mean_gradient = 1 / self.batch_size * np.mean(gradients, axis=0)
        self.optimiser.apply_gradients(zip(mean_gradient, variables))  # <- GAC108
