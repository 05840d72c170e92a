# Modelled on a Keras diffusion model's train_step (TF2, public, repo
# unknown): one helper clips and applies whatever it is handed; the step
# hands it the micro-batch's gradients when accumulation is off, and a
# tf.cond branch hands it the sums divided by N when a cycle ends. The
# path without sums is no undivided path of the sums. Clean, but for
# the partial cycle Model.fit carries across epochs (GAC110).
import tensorflow as tf


class Diffusion(tf.keras.Model):
    def __init__(self, net, accumulate=1):
        super(Diffusion, self).__init__()
        self.net = net
        self.accumulate = accumulate
        if accumulate > 1:
            self.steps = tf.constant(accumulate, dtype=tf.int64)
            self.seen = tf.Variable(0, dtype=tf.int64, trainable=False)
            self.sums = [tf.Variable(tf.zeros_like(w), trainable=False)
                         for w in net.trainable_weights]

    def _update(self, gradients):
        pairs = [(g, w) for g, w in zip(gradients, self.net.trainable_weights) if g is not None]
        grads, weights = zip(*pairs)
        grads, _ = tf.clip_by_global_norm(grads, 1.0)
        self.optimizer.apply_gradients(zip(grads, weights))

    def _update_from_sums(self):
        self._update([s / tf.cast(self.steps, s.dtype) for s in self.sums])
        for s in self.sums:
            s.assign(tf.zeros_like(s))
        self.seen.assign(0)
        return tf.constant(0)

    def train_step(self, images):
        noise = tf.random.normal(tf.shape(images))
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.net(images + noise) - noise))
        gradients = tape.gradient(loss, self.net.trainable_weights)
        if self.accumulate <= 1:
            self._update(gradients)
        else:
            for s, g in zip(self.sums, gradients):
                s.assign_add(g)
            self.seen.assign_add(1)
            tf.cond(tf.equal(self.seen, self.steps), self._update_from_sums,  # <- GAC110
                    lambda: tf.constant(0))
        return {"loss": loss}
