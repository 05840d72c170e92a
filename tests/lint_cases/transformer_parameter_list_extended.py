# Modelled on a from-scratch Transformer LM (TF2, raw tf.Variables, public,
# repo unknown): the model gathers its variables with
# `self.parameter_list += block.parameter_list`, a list of variables
# extended, not a sum of gradients; the accumulated gradients are divided
# by N before the apply; with accum_steps 0 it applies each batch. Clean.
import tensorflow as tf


class Block(object):
    def __init__(self, d):
        self.w = tf.Variable(tf.random.normal([d, d]))
        self.parameter_list = [self.w]


class Transformer(tf.Module):
    def __init__(self, d=8, layers=2, accum_steps=4):
        super().__init__()
        self.blocks = [Block(d) for _ in range(layers)]
        self.parameter_list = []
        for block in self.blocks:
            self.parameter_list += block.parameter_list
        self.accum_steps = accum_steps
        self.opt = tf.keras.optimizers.Adam(1e-3)
        self.step_counter = tf.Variable(0, trainable=False)
        self.accum_grads = [tf.Variable(tf.zeros_like(p), trainable=False) for p in self.parameter_list]

    def evaluate(self, x):
        for block in self.blocks:
            x = tf.matmul(x, block.w)
        return tf.reduce_mean(tf.square(x))

    @tf.function
    def train_step(self, x):
        with tf.GradientTape() as tape:
            loss = self.evaluate(x)
        grads = tape.gradient(loss, self.parameter_list)
        if self.accum_steps > 0:
            self.step_counter.assign_add(1)
            for acc, g in zip(self.accum_grads, grads):
                acc.assign_add(g)
            if tf.equal(self.step_counter, self.accum_steps):
                self.step_counter.assign(0)
                mean = [acc / tf.cast(self.accum_steps, tf.float32) for acc in self.accum_grads]
                self.opt.apply_gradients(zip(mean, self.parameter_list))
                for acc in self.accum_grads:
                    acc.assign(tf.zeros_like(acc))
        else:
            self.opt.apply_gradients(zip(grads, self.parameter_list))
        return loss
