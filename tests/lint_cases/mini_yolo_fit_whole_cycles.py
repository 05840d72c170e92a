# Modelled on a small YOLO-style detector trained with Model.fit (TF2,
# Keras train_step, public, repository not named by the index): the model
# class sums gradients in variables and applies every ACCUM_STEPS batches;
# the script builds it, sets an attribute on it (`model.backbone = ...`,
# which leaves `model` the accumulating model) and fits with
# steps_per_epoch=400, a multiple of ACCUM_STEPS, so no epoch ends inside a
# cycle: clean (no GAC110).
import tensorflow as tf

ACCUM_STEPS = 8


class AccumModel(tf.keras.Model):
    def __init__(self, accum_steps, **kwargs):
        super(AccumModel, self).__init__(**kwargs)
        self.accum_steps = accum_steps
        self.count = tf.Variable(0, trainable=False)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in self.trainable_variables]

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True)) / self.accum_steps
        grads = tape.gradient(loss, self.trainable_variables)
        for s, g in zip(self.sums, grads):
            s.assign_add(g)
        self.count.assign_add(1)
        if self.count % self.accum_steps == 0:
            self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))
            for s in self.sums:
                s.assign(tf.zeros_like(s))
        return {"loss": loss}


def main(base, train_ds, epochs):
    model = AccumModel(ACCUM_STEPS, inputs=base.input, outputs=base.output)
    model.backbone = base.backbone
    model.compile(optimizer="adam", loss="mse", run_eagerly=True)
    model.fit(train_ds.repeat(), epochs=epochs,
              steps_per_epoch=400)
