# Modelled on a Conformer-CTC speech model (TensorFlowASR-style, public,
# repository not named by the index): the model overrides
# make_train_function so that each step runs `train_step` through
# `self.distribute_strategy.run` (replica context, meant for TPU cores);
# the accumulating subclass's train_step adds gradients / N into variables
# and wraps the apply in tf.cond on a step variable. Under a strategy with
# more than one replica the apply inside tf.cond cannot merge (GAC111);
# and the step variable counts on across fit epochs (GAC110).
import tensorflow as tf


class CtcBase(tf.keras.Model):
    def make_train_function(self):
        if self.train_function is not None:
            return self.train_function

        def one_step(iterator):
            batch = next(iterator)
            out = self.distribute_strategy.run(self.train_step, args=(batch,))
            return self.distribute_strategy.reduce("MEAN", out["loss"], axis=None)

        self.train_function = tf.function(one_step)
        return self.train_function


class CtcAccumulating(CtcBase):
    def __init__(self, micro_steps, **kwargs):
        super(CtcAccumulating, self).__init__(**kwargs)
        self.micro_steps = tf.constant(micro_steps, tf.int32)
        self.seen = tf.Variable(0, dtype=tf.int32, trainable=False)

    def build_sums(self):
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in self.trainable_variables]

    def train_step(self, batch):
        self.seen.assign_add(1)
        features, labels = batch
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(labels, self(features, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        for i in range(len(self.sums)):
            self.sums[i].assign_add(grads[i] / tf.cast(self.micro_steps, tf.float32))
        tf.cond(tf.equal(self.seen, self.micro_steps),  # <- GAC111 GAC110
                self.apply_sums, lambda: None)
        return {"loss": loss}

    def apply_sums(self):
        self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))
        self.seen.assign(0)
        for s in self.sums:
            s.assign(tf.zeros_like(s))
