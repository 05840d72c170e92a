# Modelled on a Keras Model wrapper with distillation, SAM and gradient
# accumulation: train_step divides the loss by N; the SAM helper moves the
# weights it is handed as trainable_vars by e_w (v.assign_add(e_w)) and
# back, which sums no gradients; the accumulation adds into variables and
# applies, clipped once, when the step counter reaches a multiple of N. No
# sum is divided twice; fit runs train_step over epochs and the counter runs
# on across them, carrying each epoch's partial cycle (GAC110).
import tensorflow as tf


class Wrapper(tf.keras.Model):
    def __init__(self, architecture, gradient_accumulation_steps, sam_rho=0.05):
        super(Wrapper, self).__init__()
        self.architecture = architecture
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.sam_rho = sam_rho
        self.step_counter = tf.Variable(0, trainable=False, dtype=tf.int64)
        self.accumulated_gradients = None

    def _apply_gradients(self, gradients, trainable_vars):
        if self.gradient_accumulation_steps == 1:
            self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        else:
            if self.accumulated_gradients is None:
                self.accumulated_gradients = [tf.Variable(tf.zeros_like(v), trainable=False)
                                              for v in trainable_vars]
            for accum, grad in zip(self.accumulated_gradients, gradients):
                accum.assign_add(grad)
            self.step_counter.assign_add(1)
            if self.step_counter % self.gradient_accumulation_steps == 0:  # <- GAC110
                clipped, _ = tf.clip_by_global_norm(self.accumulated_gradients, 1.0)
                self.optimizer.apply_gradients(zip(clipped, trainable_vars))
                for accum in self.accumulated_gradients:
                    accum.assign(tf.zeros_like(accum))

    def _sam_gradients(self, tape, scaled_loss, trainable_vars, x, y):
        grads = tape.gradient(scaled_loss, trainable_vars)
        scale = self.sam_rho / (tf.linalg.global_norm(grads) + 1e-12)
        e_ws = [g * scale for g in grads]
        for v, e_w in zip(trainable_vars, e_ws):
            v.assign_add(e_w)
        with tf.GradientTape() as again:
            loss = self.compiled_loss(y, self.architecture(x, training=True))
            scaled = loss / self.gradient_accumulation_steps
        sharp = again.gradient(scaled, trainable_vars)
        for v, e_w in zip(trainable_vars, e_ws):
            v.assign_sub(e_w)
        return sharp

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self.architecture(x, training=True))
            scaled = loss / self.gradient_accumulation_steps
        trainable_vars = self.architecture.trainable_variables
        self._apply_gradients(self._sam_gradients(tape, scaled, trainable_vars, x, y),
                              trainable_vars)
        return {"loss": loss}
