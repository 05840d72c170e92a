# Modelled on a small language model's pretraining script under
# tf.distribute (TF2, public, repository not named by the index): each
# micro-step runs the replicas' step with strategy.run and hands the
# per-replica gradients to a helper (its call returned in a tuple) that
# reduces each one with strategy.reduce (skipping the None ones); the
# reduced gradients are summed into a list rebuilt with an annotated
# `merged: list = []` and applied after N micro-steps. The reduction runs on every micro-step
# instead of once per apply (GAC104).
import tensorflow as tf


def train(strategy, model, optimizer, dist_iter, accum_steps, steps):
    def reduce_grads(per_replica):
        out = []
        for g in per_replica:
            if g is None:
                out.append(None)
            else:
                out.append(strategy.reduce(tf.distribute.ReduceOp.MEAN, g, axis=None))  # <- GAC104
        return out

    def micro_step(batch):
        def step_fn(x, y):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
                    y, logits, from_logits=True)) / accum_steps
            return loss, tape.gradient(loss, model.trainable_variables)

        per_loss, per_grads = strategy.run(step_fn, args=batch)
        return per_loss, reduce_grads(per_grads)

    for _ in range(steps):
        sums = [tf.zeros_like(v) for v in model.trainable_variables]
        for _ in range(accum_steps):
            _, grads = micro_step(next(dist_iter))
            merged: list = []
            for s, g in zip(sums, grads):
                merged.append(s if g is None else s + tf.convert_to_tensor(g))
            sums = merged
        optimizer.apply_gradients(zip(sums, model.trainable_variables))
