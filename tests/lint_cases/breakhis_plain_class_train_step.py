# Modelled on a BreaKHis EfficientNet trainer (TF2 eager, public, repo
# unknown): a wrapper class of its own, not a Keras model, names its method
# train_step and keeps a Python counter; an eager loop calls it, so the
# counter moves each call (clean). The same method on a Keras model that
# fit traces keeps the counter at its traced value (GAC105).
import tensorflow as tf


class GradientAccumulationModel:
    def __init__(self, model, optimizer, loss_fn, accumulation_steps=4):
        self.model = model
        self.optimizer = optimizer
        self.loss_fn = loss_fn
        self.accumulation_steps = accumulation_steps
        self.sums = [tf.zeros_like(v) for v in model.trainable_variables]
        self.steps = 0

    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = self.loss_fn(y, self.model(x, training=True)) / self.accumulation_steps
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.sums = [s + g for s, g in zip(self.sums, grads)]
        self.steps += 1
        if self.steps >= self.accumulation_steps:
            self.optimizer.apply_gradients(zip(self.sums, self.model.trainable_variables))
            self.sums = [tf.zeros_like(v) for v in self.model.trainable_variables]
            self.steps = 0
        return loss


class AccumulatingKerasModel(tf.keras.Model):
    def __init__(self, accumulation_steps=4, **kwargs):
        super().__init__(**kwargs)
        self.accumulation_steps = accumulation_steps
        self.steps = 0

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True)) / self.accumulation_steps
        grads = tape.gradient(loss, self.trainable_variables)
        self.steps += 1  # <- GAC105
        return {"loss": loss}


def train(model, dataset):
    trainer = GradientAccumulationModel(model, tf.keras.optimizers.Adam(), tf.keras.losses.MeanSquaredError())
    for x, y in dataset:
        trainer.train_step(x, y)
