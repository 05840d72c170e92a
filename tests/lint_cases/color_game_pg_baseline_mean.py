# Modelled on a policy-gradient agent for a colour-flood game (TF2 eager,
# public, repository not named by the index): each episode's step
# gradients, weighted by the discounted reward minus its mean (a
# baseline), are added to a buffer applied every N episodes. The mean
# centres the rewards, it divides no gradient: the buffer is applied as a
# sum (GAC101); and `not e_n % N` fires at episode 0, after one episode
# (GAC109).
import numpy as np
import tensorflow as tf


class PolicyGradient(object):
    def __init__(self, model, env, n_episodes, update_after_episodes, gamma=0.99):
        self.model, self.env, self.gamma = model, env, gamma
        self.n_episodes, self.update_after_episodes = n_episodes, update_after_episodes
        self.optimizer = tf.keras.optimizers.Adam(1e-3)
        self.grad_buffer = [np.zeros(v.shape) for v in model.trainable_variables]

    def action_and_grads(self, obs):
        with tf.GradientTape() as tape:
            logits = self.model(obs)
            action = np.random.choice(len(logits[0]), p=logits.numpy()[0])
            loss = -tf.math.log(logits[0, action])
        return action, tape.gradient(loss, self.model.trainable_variables)

    def discount(self, rewards):
        return [sum(r * self.gamma ** j for j, r in enumerate(rewards[i:]))
                for i in range(len(rewards))]

    def train(self):
        for e_n in range(self.n_episodes):
            obs, done = self.env.reset(), False
            e_grads, e_rewards = [], []
            while not done:
                action, grads = self.action_and_grads(obs)
                obs, reward, done = self.env.step(action)
                e_grads.append(grads)
                e_rewards.append(reward)
            discounted = self.discount(e_rewards)
            baseline = np.mean(discounted)
            for grads, reward in zip(e_grads, np.array(discounted) - baseline):
                for i, grad in enumerate(grads):
                    self.grad_buffer[i] += grad * reward
            variables = self.model.trainable_variables
            if not e_n % self.update_after_episodes:  # <- GAC109
                self.optimizer.apply_gradients(zip(self.grad_buffer, variables))  # <- GAC101
                self.grad_buffer = [np.zeros(v.shape) for v in self.model.trainable_variables]
