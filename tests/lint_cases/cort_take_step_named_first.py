# Modelled on OrigamiDream/CoRT (run_pretraining.py): the loop computes a
# `take_step` flag as `first or (step + 1) % N == 0` and hands it to the
# step function, which applies the accumulator's mean when it is set; the
# very first micro-batch applies alone.
import tensorflow as tf


def train_one_step(model, optimizer, batch, accumulator, n_accum, take_step):
    with tf.GradientTape() as tape:
        loss = model(batch, training=True)
    grads = tape.gradient(loss, model.trainable_variables)
    accumulator(grads)
    if take_step:
        means = [g / n_accum for g in accumulator.gradients]
        optimizer.apply_gradients(zip(means, model.trainable_variables))
        accumulator.reset()
    return loss


def main(model, optimizer, batches, accumulator, n_accum):
    done = 0
    for step, batch in enumerate(batches):
        take_step = (done == 0) or (step + 1) % n_accum == 0  # <- GAC109
        train_one_step(model, optimizer, batch, accumulator, n_accum, take_step)
        done += 1
