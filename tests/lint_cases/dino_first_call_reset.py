# Modelled on a DINO self-supervised Keras model with gradient
# accumulation (TF2, public, repository not named by the index): the
# model's train_step zeroes its accumulators "on the first call" behind a
# Python flag, `if self.first_call: self.first_call = False`. fit traces
# train_step once: the flag flips at tracing, and the branch it guarded,
# with its resets, is in the graph for every step (GAC105).
import tensorflow as tf


class Dino(tf.keras.Model):
    def __init__(self, student, accumulation_steps=8, **kwargs):
        super(Dino, self).__init__(**kwargs)
        self.student = student
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in student.trainable_variables]
        self.count = tf.Variable(0, trainable=False, dtype=tf.int32)
        self.accumulation_steps = accumulation_steps
        self.first_call = True

    def train_step(self, data):
        if self.first_call:
            self.first_call = False  # <- GAC105
            for s in self.sums:
                s.assign(tf.zeros_like(s))
        self.count.assign_add(1)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.student(data, training=True)) / self.accumulation_steps
        grads = tape.gradient(loss, self.student.trainable_variables)
        for s, g in zip(self.sums, grads):
            s.assign_add(g)
        return {"loss": loss}
