# Modelled on a Keras diffusion model (public, repository unknown): with
# ``self._use_grad_accum`` off, train_step applies the micro-batch's own
# gradients through a helper; with it on, it accumulates and a tf.cond
# applies the mean through the same helper every N steps. The plain path
# is no apply beside the accumulation (no GAC109); fit still carries the
# partial cycle across epochs (GAC110 at the gate).
import tensorflow as tf


class Diffusion(tf.keras.Model):
    def __init__(self, network, steps=1, **kwargs):
        super(Diffusion, self).__init__(**kwargs)
        self.network, self.steps = network, steps
        self._use_grad_accum = steps > 1
        self.sums = [tf.Variable(tf.zeros_like(w), trainable=False)
                     for w in network.trainable_weights]
        self.seen = tf.Variable(0, trainable=False)

    def _apply(self, grads):
        self.optimizer.apply_gradients(zip(grads, self.network.trainable_weights))

    def _apply_sums(self):
        self._apply([s / self.steps for s in self.sums])
        for s in self.sums:
            s.assign(tf.zeros_like(s))
        self.seen.assign(0)
        return tf.constant(0)

    @tf.function
    def train_step(self, images):
        noise = tf.random.normal(tf.shape(images))
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.network(images + noise) - noise))
        grads = tape.gradient(loss, self.network.trainable_weights)
        if not self._use_grad_accum:
            self._apply(grads)
        else:
            for s, g in zip(self.sums, grads):
                s.assign_add(g)
            self.seen.assign_add(1)
            tf.cond(tf.equal(self.seen, self.steps), self._apply_sums,  # <- GAC110
                    lambda: tf.constant(0))
        return {"loss": loss}
