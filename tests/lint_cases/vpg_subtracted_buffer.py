# Modelled on a TF2 vanilla policy-gradient agent (public, repository
# unknown): each step's gradient, weighted by its reward-to-go and 1/N, is
# subtracted into a buffer (the optimizer minimizes, the agent maximizes),
# and the buffer is applied when ``episode % N == 0 and episode != 0``:
# the episodes 0 to N all go into the first apply, N + 1 of them.
import numpy as np
import tensorflow as tf


def train(env, policy, optimizer, episodes, per_update, gamma=0.99):
    buffer = [tf.zeros_like(v) for v in policy.trainable_variables]
    for episode in range(episodes):
        obs, steps, done = env.reset(), [], False
        while not done:
            with tf.GradientTape() as tape:
                log_prob = policy.log_prob(obs)
            grads = tape.gradient(log_prob, policy.trainable_variables)
            obs, reward, done, _ = env.step(policy.sample(obs))
            steps.append((reward, grads))
        returns = np.cumsum([r for r, _ in steps][::-1])[::-1] * gamma
        for (_, grads), ret in zip(steps, returns):
            for i, g in enumerate(grads):
                buffer[i] -= g * ret / per_update
        if episode % per_update == 0 and episode != 0:  # <- GAC109
            optimizer.apply_gradients(zip(buffer, policy.trainable_variables))
            buffer = [b * 0 for b in buffer]
