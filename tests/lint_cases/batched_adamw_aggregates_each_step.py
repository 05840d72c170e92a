# Modelled on a Keras optimizer subclass that accumulates (a "BatchedAdamW",
# public, repository unknown): its apply_gradients, called on every
# micro-batch, first aggregates the gradients across devices (the
# optimizer's own cross-replica reduction, switched off only by an
# option), then adds them to its slots and applies every N-th call: one
# reduction per micro-step instead of one per apply.
import tensorflow as tf


class BatchedAdamW(tf.keras.optimizers.AdamW):
    def __init__(self, update_interval=1, **kwargs):
        super(BatchedAdamW, self).__init__(**kwargs)
        self.update_interval = update_interval
        self.count = tf.Variable(0, trainable=False)

    def build(self, var_list):
        super(BatchedAdamW, self).build(var_list)
        self.sums = [self.add_variable_from_reference(v, "sum") for v in var_list]

    def apply_gradients(self, grads_and_vars, name=None, skip_gradients_aggregation=False):
        if not skip_gradients_aggregation:
            grads_and_vars = self.aggregate_gradients(grads_and_vars)  # <- GAC104
        grads, variables = zip(*grads_and_vars)
        self.count.assign_add(1)

        def add():
            for s, g in zip(self.sums, grads):
                s.assign_add(g / self.update_interval)
            return tf.constant(0)

        def update():
            add()
            super(BatchedAdamW, self).apply_gradients(
                zip(list(self.sums), variables), skip_gradients_aggregation=True)
            for s in self.sums:
                s.assign(tf.zeros_like(s))
            return tf.constant(0)

        return tf.cond(self.count % self.update_interval == 0, update, add)
