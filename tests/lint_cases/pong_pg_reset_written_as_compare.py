# Modelled on a Karpathy-style Pong policy-gradient script ported to TF1:
# each episode's summed gradients go into a batch buffer, which starts
# afresh when `batch_idx == 0` and is applied every BATCH_SIZE episodes.
# The reset after the apply is written `batch_idx == 0`, a comparison
# thrown away: the count never returns to 0 and the buffer is never
# restarted, so every apply holds all episodes since the start (GAC109).
import tensorflow as tf

BATCH_SIZE = 10


def train(sess, env, one_episode, variables, global_step):
    optimizer = tf.train.AdamOptimizer(1e-4)
    episode_number, batch_idx = 0, 0
    batch_grads = None
    while True:
        grads = one_episode(env)
        episode_number += 1
        if batch_idx == 0:
            batch_grads = grads
        else:
            for i in range(len(batch_grads)):
                batch_grads[i] += grads[i]
        if episode_number % BATCH_SIZE == 0:
            mean = [tf.convert_to_tensor(g / BATCH_SIZE) for g in batch_grads]
            sess.run(optimizer.apply_gradients(zip(mean, variables), global_step=global_step))
            batch_idx == 0  # <- GAC109
        else:
            batch_idx += 1
