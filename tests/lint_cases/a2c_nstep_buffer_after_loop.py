# Modelled on an n-step A2C agent for CartPole (TF2 eager, public,
# repository unknown): every n_step environment steps, the branch that
# updates walks the stored history, keeps each step's critic gradients,
# adds them in a loop of their own to a buffer, applies the buffer once
# after that loop and zeroes it. The apply runs once per n_step steps,
# not on every micro-batch (no GAC102); but the per-step gradients of a
# mean loss are summed and applied undivided (GAC101).
import numpy as np
import tensorflow as tf


def train(env, critic, optimizer, n_step, gamma, total_steps):
    grad_buffer = [tf.zeros_like(v) for v in critic.trainable_variables]
    hist, upd_step, s = [], 0, env.reset()
    for _ in range(total_steps):
        a = np.random.randint(2)
        s_next, r, done = env.step(a)
        hist.append((s, r))
        upd_step += 1
        s = env.reset() if done else s_next
        if upd_step == n_step:
            upd_step, memory, R = 0, [], 0.0
            for state, r in hist[::-1]:
                R = r + gamma * R
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(R - critic(state[None]))) * 0.5
                memory.append(tape.gradient(loss, critic.trainable_variables))
            for grads in memory:
                for ix, grad in enumerate(grads):
                    grad_buffer[ix] += grad
            optimizer.apply_gradients(zip(grad_buffer, critic.trainable_variables))  # <- GAC101
            for ix, grad in enumerate(grad_buffer):
                grad_buffer[ix] = grad * 0
            hist = []
