# Modelled on a Model Garden pretraining task's train_step with gradient
# accumulation (TF2, tf.function under a tf.distribute strategy, public,
# repository not named by the index): the step splits its batch into
# `num_small_steps = batch_size // per_replica` slices, sums their
# gradients and applies the sum once. Each slice's loss is divided by
# num_small_steps; but with `scale_loss` set, the gradient is taken of a
# `scaled_loss` made from the loss before that division, so on that path
# the sum is applied undivided (GAC101).
import tensorflow as tf

PER_REPLICA = 8


class PretrainTask(object):
    def __init__(self, config):
        self.config = config

    def train_step(self, inputs, model, optimizer):
        features, labels = inputs
        sums = [tf.zeros_like(v) for v in model.trainable_variables]
        num_small_steps = tf.shape(features)[0] // PER_REPLICA
        for _ in tf.range(num_small_steps):
            small_x, small_y = features[:PER_REPLICA], labels[:PER_REPLICA]
            loss, grads = self._small_step(small_x, small_y, model, num_small_steps)
            sums = [s + g for s, g in zip(sums, grads)]
            features = tf.concat([features[PER_REPLICA:], small_x], axis=0)
            labels = tf.concat([labels[PER_REPLICA:], small_y], axis=0)
        optimizer.apply_gradients(zip(sums, model.trainable_variables))  # <- GAC101
        return loss

    def _small_step(self, x, y, model, num_small_steps):
        with tf.GradientTape() as tape:
            loss = self.build_losses(y, model(x, training=True))
            if self.config.scale_loss:
                scaled_loss = loss / tf.distribute.get_strategy().num_replicas_in_sync
            loss = loss / tf.cast(num_small_steps, loss.dtype)
        if self.config.scale_loss:
            grads = tape.gradient(scaled_loss, model.trainable_variables)
        else:
            grads = tape.gradient(loss, model.trainable_variables)
        return loss, grads

    def build_losses(self, labels, outputs):
        return tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, outputs))
