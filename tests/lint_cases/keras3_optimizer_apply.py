# Modelled on keras.io's Keras 3 guide "Customizing what happens in fit()
# with TensorFlow" (a train_step that updates with optimizer.apply), with the
# accumulation of the widely copied n_acum_step train_step answer: Keras 3's
# optimizer.apply(grads, variables) is the apply, and the sum reaches it
# undivided.
import keras
import tensorflow as tf
from keras import ops


class AccumModel(keras.Model):
    def __init__(self, accum_steps=4, **kwargs):
        super().__init__(**kwargs)
        self.accum_steps = accum_steps
        self.seen = keras.Variable(0, dtype="int32", trainable=False)

    def build(self, input_shape):
        super().build(input_shape)
        self.sums = [keras.Variable(ops.zeros_like(v), trainable=False)
                     for v in self.trainable_variables]

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(y=y, y_pred=self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        for s, g in zip(self.sums, grads):
            s.assign_add(g)
        self.seen.assign_add(1)

        def update():
            self.optimizer.apply(self.sums, self.trainable_variables)  # <- GAC101
            for s in self.sums:
                s.assign(ops.zeros_like(s))
            self.seen.assign(0)
            return 0

        ops.cond(ops.equal(self.seen, self.accum_steps), update, lambda: 0)  # <- GAC110
        return {"loss": loss}


def pipeline(files):
    # a dataset's apply is no optimizer's
    return tf.data.TFRecordDataset(files).apply(tf.data.experimental.ignore_errors())
