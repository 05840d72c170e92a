# Modelled on a particle-physics point-cloud network (TF2, public, repo
# unknown): the model's base class comes from another file of its project,
# but its train_step uses the Keras Model API (self.compiled_loss,
# self.compiled_metrics): fit runs it. It adds each gradient / N to
# variables and applies under tf.cond when its counter reaches a multiple
# of N; nothing applies what an epoch leaves (GAC110, carried by fit).
import tensorflow as tf

from .abstract import AbstractNet


class CMANet(AbstractNet):
    def __init__(self, accum_steps=4, **kwargs):
        super(CMANet, self).__init__(**kwargs)
        self.accum_steps = accum_steps
        self.counter = tf.Variable(0, trainable=False)
        self.sums = None

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True), regularization_losses=self.losses)
        grads = tape.gradient(loss, self.trainable_variables)
        for i, g in enumerate(grads):
            self.sums[i].assign_add(g / self.accum_steps)
        self.counter.assign_add(1)
        ready = self.counter % self.accum_steps == 0
        tf.cond(ready, lambda: self.optimizer.apply_gradients(  # <- GAC110
            zip(self.sums, self.trainable_variables)), lambda: False)
        self.compiled_metrics.update_state(y, self(x, training=False))
        return {m.name: m.result() for m in self.metrics}
