# Modelled on a Keras benchmark script's accumulating model (public,
# repository unknown): train_step adds each batch's gradients to the sums
# and applies their mean under tf.cond when a counter reaches the module
# constant ACCUM_STEPS = 4; `fit(..., steps_per_epoch=1000)` on a repeated
# dataset gives every epoch a multiple of 4 batches, so no partial cycle
# is carried from one epoch into the next. Correct: no finding.
import tensorflow as tf

ACCUM_STEPS = 4


class AccumulatingModel(tf.keras.Model):
    def __init__(self, base_model):
        super(AccumulatingModel, self).__init__()
        self.model = base_model
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in base_model.trainable_variables]
        self.counter = tf.Variable(0, trainable=False, dtype=tf.int32)

    def call(self, inputs, training=False):
        return self.model(inputs, training=training)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        for total, g in zip(self.sums, grads):
            total.assign_add(g)
        self.counter.assign_add(1)
        apply_now = tf.equal(self.counter, ACCUM_STEPS)

        def apply_mean():
            self.optimizer.apply_gradients(
                zip([t / ACCUM_STEPS for t in self.sums], self.trainable_variables))
            for total in self.sums:
                total.assign(tf.zeros_like(total))
            self.counter.assign(0)
            return 0

        tf.cond(apply_now, apply_mean, lambda: 0)
        return {"loss": loss}


def main(base_model, dataset):
    model = AccumulatingModel(base_model)
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-3), loss="mse")
    model.fit(dataset.repeat(), epochs=2, steps_per_epoch=1000)
