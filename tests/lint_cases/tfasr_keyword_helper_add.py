# Modelled on TensorFlowASR's BaseModel train_step (public): with
# gradient accumulation switched on it hands the gradients to a helper by
# keyword (``self.ga.accumulate(gradients=...)``), then applies the
# helper's running sums on every micro-batch; only their reset waits for
# the cycle's end.
import tensorflow as tf


class BaseModel(tf.keras.Model):
    def __init__(self, ga=None, **kwargs):
        super(BaseModel, self).__init__(**kwargs)
        self.ga, self.use_ga = ga, ga is not None

    def train_step(self, batch):
        inputs, y_true = batch
        with tf.GradientTape() as tape:
            per_sample = self.loss(y_true, self(inputs, training=True))
            loss = tf.nn.compute_average_loss(per_sample)
        gradients = tape.gradient(loss, self.trainable_weights)
        if self.use_ga:
            self.ga.accumulate(gradients=[g / self.ga.steps for g in gradients])
            self.optimizer.apply_gradients(zip(self.ga.gradients, self.trainable_variables))  # <- GAC102
            tf.cond(self.ga.is_apply_step, self.ga.reset, lambda: None)
        else:
            self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        return {"loss": loss}
