# Modelled on a dual-encoder (dense retrieval) trainer under tf.distribute
# (public, repository unknown): one loop runs N micro-batches through
# ``strategy.run(step_fn)``, where ``step_fn`` is a parameter its callers
# bind to one of two methods (``self.a if flag else self.b``); each method
# all-reduces its gradients, so every micro-batch is all-reduced, also the
# one whose gradients a gradient cache first sums over the batch's four
# chunks in a tf.while_loop (sums of its own, one micro-step's). The
# reduction of the loss, ``results["loss"]``, is only a figure to log.
import tensorflow as tf


class Trainer(object):
    def __init__(self, strategy, model, optimizer, steps, cached):
        self.strategy, self.model, self.optimizer = strategy, model, optimizer
        self.steps, self.cached = steps, cached

    def train(self, iterator, total):
        step_fn = self.cached_step_fn if self.cached else self.plain_step_fn
        for _ in range(total):
            self.accumulate_step(iterator, step_fn, self.steps)

    def accumulate_step(self, iterator, step_fn, steps):
        sums, loss = None, 0.0
        for _ in range(steps):
            results = self.strategy.run(step_fn, args=(next(iterator),))
            loss += self.strategy.reduce(tf.distribute.ReduceOp.SUM, results["loss"], axis=None)
            grads = results["grads"]
            sums = grads if sums is None else [s + g for s, g in zip(sums, grads)]
        sums = [s / steps for s in sums]
        self.strategy.run(self.update, args=(sums,))
        return loss / steps

    @tf.function
    def update(self, grads):
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))

    @tf.function
    def plain_step_fn(self, batch):
        with tf.GradientTape() as tape:
            loss = self.model(batch)
        grads = tape.gradient(loss, self.model.trainable_variables)
        ctx = tf.distribute.get_replica_context()
        return {"loss": loss, "grads": ctx.all_reduce(tf.distribute.ReduceOp.SUM, grads)}  # <- GAC104

    @tf.function
    def cached_step_fn(self, batch):
        variables = self.model.trainable_variables
        chunks = tf.stack(tf.split(batch, 4))

        def body(i, sums):
            with tf.GradientTape() as tape:
                part = self.model(chunks[i], training=True) / 4.0
            return i + 1, [s + g for s, g in zip(sums, tape.gradient(part, variables))]

        _, grads = tf.while_loop(lambda i, _: i < 4, body,
                                 [0, [tf.zeros_like(v) for v in variables]])
        loss = self.model(batch)
        ctx = tf.distribute.get_replica_context()
        return {"loss": loss, "grads": ctx.all_reduce(tf.distribute.ReduceOp.SUM, grads)}  # <- GAC104
