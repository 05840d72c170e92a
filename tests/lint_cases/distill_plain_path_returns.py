# Modelled on a Keras distillation model with EMA (TF2, public, repo
# unknown): with one accumulation step it clips, applies and returns; the
# accumulating path after that `if` never sees the clipped gradients, and
# clips the mean it applies. Its reset_metrics, which fit calls as each
# epoch begins, flushes what is left of the last cycle. Clean.
import tensorflow as tf


class DistillModel(tf.keras.Model):
    def __init__(self, architecture, accumulation_steps=4, clip=1.0):
        super().__init__()
        self.architecture = architecture
        self.gradient_accumulation_steps = accumulation_steps
        self.model_clip_gradient = clip
        self.accumulated_steps = tf.Variable(0, trainable=False)
        self.accumulated_gradients = [tf.Variable(tf.zeros_like(v), trainable=False)
                                      for v in architecture.trainable_variables]

    def reset_metrics(self):
        self._flush_accumulated_gradients()
        super().reset_metrics()

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self.architecture(x, training=True))
        gradients = tape.gradient(loss, self.architecture.trainable_variables)
        self._apply_gradients(gradients)
        return {"loss": loss}

    def _clip_gradients(self, gradients):
        gradients, _ = tf.clip_by_global_norm(gradients, self.model_clip_gradient)
        return gradients

    def _apply_gradients(self, gradients):
        if self.gradient_accumulation_steps == 1:
            gradients = self._clip_gradients(gradients)
            self.optimizer.apply_gradients(zip(gradients, self.architecture.trainable_variables))
            return tf.constant(True)
        for accum, grad in zip(self.accumulated_gradients, gradients):
            accum.assign_add(grad)
        self.accumulated_steps.assign_add(1)
        return tf.cond(self.accumulated_steps >= self.gradient_accumulation_steps,
                       self._apply_accumulated_gradients, lambda: tf.constant(False))

    def _apply_accumulated_gradients(self):
        count = tf.cast(self.accumulated_steps, tf.float32)
        gradients = [a / count for a in self.accumulated_gradients]
        gradients = self._clip_gradients(gradients)
        self.optimizer.apply_gradients(zip(gradients, self.architecture.trainable_variables))
        for a in self.accumulated_gradients:
            a.assign(tf.zeros_like(a))
        self.accumulated_steps.assign(0)
        return tf.constant(True)

    def _flush_accumulated_gradients(self):
        if self.gradient_accumulation_steps > 1:
            tf.cond(self.accumulated_steps > 0, self._apply_accumulated_gradients,
                    lambda: tf.constant(False))


def train(architecture, dataset):
    model = DistillModel(architecture)
    model.compile(optimizer="adam", loss="mse")
    model.fit(dataset, epochs=3)
