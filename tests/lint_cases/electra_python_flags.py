# Modelled on a TF2 + Horovod pretraining script that decides in Python when
# to apply and passes the decision into a tf.function: the counter starts at
# 0, so `local_step % N == 0` applies after the first micro-batch (lint
# follows the decision through the call's keyword argument), and the
# helper's sum of unscaled losses' gradients is applied undivided.
import tensorflow as tf


@tf.function
def train_one_step(model, optimizer, features, accumulator, take_step):
    with tf.GradientTape() as tape:
        loss = model(features)
    grads = tape.gradient(loss, model.trainable_variables)
    accumulator(grads)
    if take_step:
        optimizer.apply_gradients(zip(accumulator.gradients, model.trainable_variables))  # <- GAC101
        accumulator.reset()
    return loss


local_step = 0
for features in dataset:
    train_one_step(model, optimizer, features, accumulator,
                   take_step=local_step % ACCUM_STEPS == 0)  # <- GAC109
    local_step += 1
