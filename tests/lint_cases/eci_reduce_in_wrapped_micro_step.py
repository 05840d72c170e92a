# Modelled on rakheOmar/eci-slm (main.py): a tf.function micro-step, reached
# through a thin wrapper and a path picked by `if replicas > 1`, reduces
# each replica's gradients with strategy.reduce before the loop adds them:
# an all-reduce per micro-step.
import tensorflow as tf


@tf.function
def _micro_step_tf(strategy, model, iterator, divisor):
    def step_fn(inputs):
        x, y = inputs
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y)) / divisor
        return loss, tape.gradient(loss, model.trainable_variables)

    per_replica_loss, per_replica_grads = strategy.run(step_fn, args=(next(iterator),))
    grads = []
    for g in per_replica_grads:
        grads.append(strategy.reduce(tf.distribute.ReduceOp.SUM, g, axis=None))  # <- GAC104
    return per_replica_loss, grads


def micro_step(strategy, model, iterator, divisor):
    return _micro_step_tf(strategy, model, iterator, divisor)


def train_one_step(strategy, model, optimizer, iterator, accum_steps):
    sums = [tf.zeros_like(v) for v in model.trainable_variables]
    for _ in range(accum_steps):
        _, grads = micro_step(strategy, model, iterator, accum_steps)
        sums = [s + g for s, g in zip(sums, grads)]
    optimizer.apply_gradients(zip(sums, model.trainable_variables))


def train(strategy, model, optimizer, iterator, accum_steps, total_steps):
    step = 0
    while step < total_steps:
        if strategy.num_replicas_in_sync > 1:
            train_one_step(strategy, model, optimizer, iterator, accum_steps)
        step += 1
