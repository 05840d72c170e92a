# Modelled on a Keras accumulation wrapper model (TF2, public, repo
# unknown): train_step gates the apply on the optimizer's own iterations,
# which move only when it applies, so (iterations + 1) % N == 0 never holds
# and the model never updates. The twin keeps a micro-step counter of its
# own: clean.
import tensorflow as tf


class GradientAccumulationModel(tf.keras.Model):
    def __init__(self, model, accumulation_steps=4):
        super().__init__()
        self.model = model
        self.accumulation_steps = tf.constant(accumulation_steps, dtype=tf.int64)
        self.gradient_accumulation = [tf.Variable(tf.zeros_like(v), trainable=False)
                                      for v in model.trainable_variables]

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self.model(x, training=True))
            scaled_loss = loss / tf.cast(self.accumulation_steps, loss.dtype)
        gradients = tape.gradient(scaled_loss, self.model.trainable_variables)
        for i in range(len(self.gradient_accumulation)):
            self.gradient_accumulation[i].assign_add(gradients[i])
        current_iteration = self.optimizer.iterations.numpy() + 1
        if current_iteration % self.accumulation_steps.numpy() == 0:  # <- GAC109
            self._apply_accumulated_gradients()
        return {"loss": loss}

    def _apply_accumulated_gradients(self):
        self.optimizer.apply_gradients(
            zip(self.gradient_accumulation, self.model.trainable_variables))
        for acc in self.gradient_accumulation:
            acc.assign(tf.zeros_like(acc))


class CountedAccumulationModel(tf.keras.Model):
    def __init__(self, model, accumulation_steps=4):
        super().__init__()
        self.model = model
        self.accumulation_steps = accumulation_steps
        self.micro_step = tf.Variable(0, dtype=tf.int64, trainable=False)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in model.trainable_variables]

    def train_step(self, data):
        x, y = data
        self.micro_step.assign_add(1)
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self.model(x, training=True)) / self.accumulation_steps
        gradients = tape.gradient(loss, self.model.trainable_variables)
        for s, g in zip(self.sums, gradients):
            s.assign_add(g)
        tf.cond(tf.equal(self.micro_step % self.accumulation_steps, 0), self._apply, lambda: None)
        return {"loss": loss}

    def _apply(self):
        self.optimizer.apply_gradients(zip(self.sums, self.model.trainable_variables))
        for s in self.sums:
            s.assign(tf.zeros_like(s))
