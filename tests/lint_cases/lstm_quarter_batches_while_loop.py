# Modelled on a Keras LSTM classifier's train_step (public, repo unknown)
# that stacks gradients: it splits the batch into four quarters (slices at
# batch_size // 4, a division of indices, not of gradients), adds the
# quarters' gradients through a helper in a tf.while_loop whose body
# returns the rebuilt list, and applies the sum of four mean-loss
# gradients undivided (GAC101).
import tensorflow as tf


class StackingModel(tf.keras.Model):
    def train_step(self, data):
        inputs, y_true = data
        quarter = tf.shape(inputs)[0] // 4
        gradients = self._get_gradients(inputs[:quarter], y_true[:quarter])

        def process_quarter(idx, grads_accum):
            start, end = idx * quarter, (idx + 1) * quarter
            grads_local = self._get_gradients(inputs[start:end], y_true[start:end])
            grads_accum = [self._add_gradients(a, b) for a, b in zip(grads_accum, grads_local)]
            return idx + 1, grads_accum

        _, gradients = tf.while_loop(cond=lambda idx, _: idx < 4, body=process_quarter,
                                     loop_vars=[tf.constant(1), gradients])
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))  # <- GAC101
        return {"loss": 0.0}

    def _get_gradients(self, inputs, y_true):
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y_true, self(inputs, training=True))
        return tape.gradient(loss, self.trainable_variables)

    def _add_gradients(self, a, b):
        return a + b
