# Modelled on a Keras model for EfficientNet training with Horovod (a
# gradient-accumulating ``train_step``, public, repository unknown): the
# micro-step counter is made by ``tf.Variable(initial_value=0, ...)`` and
# advanced after the ``% N == 0`` test, so the first apply follows one
# micro-batch.
import tensorflow as tf


class AccumulatingModel(tf.keras.Model):
    def __init__(self, steps, *args, **kwargs):
        super(AccumulatingModel, self).__init__(*args, **kwargs)
        self.steps = steps
        self.micro_step = tf.Variable(initial_value=0, dtype=tf.int64, trainable=False)
        self.sums = None

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        if self.sums is None:
            self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                         for v in self.trainable_variables]
        for s, g in zip(self.sums, grads):
            s.assign_add(g / self.steps)
        if self.micro_step % self.steps == 0:  # <- GAC110 GAC109
            self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))
            for s in self.sums:
                s.assign(tf.zeros_like(s))
        self.micro_step.assign_add(1)
        return {"loss": loss}
