# Modelled on a TF2 speech-synthesis trainer under MirroredStrategy: the
# loss is divided by the global batch including the accumulation factor,
# strategy.reduce runs on the loss only (for logging), the sums are applied
# once per cycle outside any tf.cond. Clean.
import tensorflow as tf


class Trainer(object):
    def __init__(self, strategy, model, optimizer, global_batch, accum_steps):
        self.strategy = strategy
        self.model = model
        self.optimizer = optimizer
        self.global_batch = global_batch
        self.accum_steps = accum_steps
        with strategy.scope():
            self.sums = [tf.Variable(tf.zeros_like(v), trainable=False,
                                     synchronization=tf.VariableSynchronization.ON_READ,
                                     aggregation=tf.VariableAggregation.SUM)
                         for v in model.trainable_variables]

    def _replica_step(self, x, y):
        with tf.GradientTape() as tape:
            per_example = loss_fn(y, self.model(x, training=True))
            loss = tf.nn.compute_average_loss(
                per_example, global_batch_size=self.global_batch * self.accum_steps)
        grads = tape.gradient(loss, self.model.trainable_variables)
        for s, g in zip(self.sums, grads):
            s.assign_add(g)
        return loss

    def _apply(self):
        self.optimizer.apply_gradients(zip(self.sums, self.model.trainable_variables))
        for s in self.sums:
            s.assign(tf.zeros_like(s))

    @tf.function
    def train(self, iterator):
        for _ in tf.range(self.accum_steps):
            loss = self.strategy.run(self._replica_step, args=next(iterator))
            self.strategy.reduce(tf.distribute.ReduceOp.SUM, loss, axis=None)
        self.strategy.run(self._apply)
