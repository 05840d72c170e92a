# Modelled on a YOLOv3 detection trainer (TF2 eager, public, repo
# unknown): the gate is `should_accum and global_steps % N`, a bare modulo
# on one side of an `and`, true on N - 1 steps of every N (GAC109); the
# branch it opens adds one micro-batch to sums just zeroed, divides and
# applies (GAC102).
import tensorflow as tf


def train(model, dataset, optimizer, params, should_accum, grad_accum_steps=4):
    tvs = model.trainable_variables
    accum = [tf.zeros_like(tv) for tv in tvs]
    for images, target in dataset:
        with tf.GradientTape() as tape:
            loss = model.loss(target, model(images, training=True))
        gradients = tape.gradient(loss, tvs)
        if should_accum and params.global_steps % grad_accum_steps:  # <- GAC109
            accum = [a + g for a, g in zip(accum, gradients)]
            accum = [a / grad_accum_steps for a in accum]
            optimizer.apply_gradients(zip(accum, tvs))  # <- GAC102
            accum = [tf.zeros_like(tv) for tv in tvs]
        else:
            optimizer.apply_gradients(zip(gradients, tvs))
