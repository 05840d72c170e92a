# Modelled on rlforge's A2C agent (TF2 eager, public): each episode's
# gradients are added to the sums, and when the episode count starts a new
# group of n_workers, the sums of the group before (if any) are divided by
# n_workers and applied, and the sums start again from this episode. The
# first episode takes that branch with nothing summed, applies nothing and
# only starts the sums, so every group holds n_workers episodes: clean
# (no GAC109).
import tensorflow as tf


class A2CAgent(object):
    def __init__(self, model, n_workers=4):
        self.model, self.n_workers = model, n_workers
        self.opt = tf.keras.optimizers.Adam(1e-3)
        self.accumulated_grads = None

    def train(self, episode, global_episode_ts):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.model.loss(episode))
        grads = tape.gradient(loss, self.model.trainable_weights)
        if (global_episode_ts - 1) % self.n_workers == 0:
            if self.accumulated_grads is not None:
                mean = [g / self.n_workers for g in self.accumulated_grads]
                self.opt.apply_gradients(zip(mean, self.model.trainable_weights))
            self.accumulated_grads = grads
        else:
            self.accumulated_grads = [a + g for g, a in zip(grads, self.accumulated_grads)]
