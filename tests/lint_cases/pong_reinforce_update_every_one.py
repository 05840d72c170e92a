# Modelled on a TF2 eager REINFORCE agent for Pong (public, repository
# unknown): each point's per-step gradients, weighted by the discounted
# rewards, are added to a buffer, and the buffer is applied when
# `episode % update_every == 0`, with `update_every = 1`. Every episode is
# a whole cycle, so nothing is accumulated across micro-batches: the
# reward-weighted sum over one episode's steps is the REINFORCE estimate
# itself. Correct: no finding.
import tensorflow as tf

update_every = 1
gamma = 0.99


def run(env, policy, optimizer, discount_rewards, episodes):
    grad_buffer = [tf.zeros_like(v) for v in policy.trainable_variables]
    for episode in range(episodes):
        state, done, memory = env.reset(), False, []
        while not done:
            with tf.GradientTape() as tape:
                logits = policy(state[None])
                action = tf.random.categorical(logits, 1)[0, 0]
                loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=[action], logits=logits)
            grads = tape.gradient(loss, policy.trainable_variables)
            state, r, done = env.step(int(action))
            memory.append((grads, r))
            if r:
                rewards = discount_rewards([m[1] for m in memory], gamma)
                for (grads, _), weight in zip(memory, rewards):
                    for ix, grad in enumerate(grads):
                        grad_buffer[ix] += grad * weight
                if episode % update_every == 0:
                    optimizer.apply_gradients(zip(grad_buffer, policy.trainable_variables))
                    for ix, grad in enumerate(grad_buffer):
                        grad_buffer[ix] = grad * 0
                memory = []
