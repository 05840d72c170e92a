# Modelled on an asynchronous-RL A3C worker (datavizweb/async-rl-tensorflow
# style, TF eager port): the step hands each micro-batch's gradients to a
# module-level function named accumulate_gradients, called by its bare
# name, which adds them to module sums; the loop applies and zeroes them
# every N batches, its loss divided by N. Lint crashed on the bare-name
# call (it read it as a method of a helper object). No finding.
import tensorflow as tf

sums = []


def accumulate_gradients(grads):
    for i, g in enumerate(grads):
        sums[i] += g


def train(model, optimizer, batches, n):
    sums[:] = [tf.zeros_like(v) for v in model.trainable_variables]
    for i, (x, y) in enumerate(batches.take(1000 * n)):
        with tf.GradientTape() as tape:
            loss = model.loss(x, y) / n
        accumulate_gradients(tape.gradient(loss, model.trainable_variables))
        if (i + 1) % n == 0:
            optimizer.apply_gradients(zip(sums, model.trainable_variables))
            sums[:] = [tf.zeros_like(v) for v in model.trainable_variables]
