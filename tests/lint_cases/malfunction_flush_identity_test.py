# Modelled on a transformer malfunction-prediction trainer (TF2 eager,
# public, repo unknown): after the epoch's loop, the flush of what is left
# is guarded by `sums[0] is not tf.zeros_like(v)`, an identity test with a
# tensor made there, always true: after a full last cycle the optimizer
# steps once more on zeros (Adam's moments still move the weights). The
# twin guards by a count of what is pending: clean.
import tensorflow as tf


def train_epoch(model, optimizer, loss_fn, dataset, accumulation_steps=4):
    accumulated = [tf.zeros_like(v) for v in model.trainable_variables]
    for step, (x, y) in enumerate(dataset):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True)) / accumulation_steps
        grads = tape.gradient(loss, model.trainable_variables)
        accumulated = [a + g for a, g in zip(accumulated, grads)]
        if (step + 1) % accumulation_steps == 0:
            optimizer.apply_gradients(zip(accumulated, model.trainable_variables))
            accumulated = [tf.zeros_like(v) for v in model.trainable_variables]
    if accumulated[0] is not tf.zeros_like(model.trainable_variables[0]):  # <- GAC109
        optimizer.apply_gradients(zip(accumulated, model.trainable_variables))


def train_epoch_counted(model, optimizer, loss_fn, dataset, accumulation_steps=4):
    accumulated = [tf.zeros_like(v) for v in model.trainable_variables]
    pending = 0
    for step, (x, y) in enumerate(dataset):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True)) / accumulation_steps
        grads = tape.gradient(loss, model.trainable_variables)
        accumulated = [a + g for a, g in zip(accumulated, grads)]
        pending += 1
        if (step + 1) % accumulation_steps == 0:
            optimizer.apply_gradients(zip(accumulated, model.trainable_variables))
            accumulated = [tf.zeros_like(v) for v in model.trainable_variables]
            pending = 0
    if pending:
        optimizer.apply_gradients(zip(accumulated, model.trainable_variables))
