# Modelled on the eager loops of the corpus, in a variant written for this
# project: the micro-batch's gradients are added to `acc` and also applied
# directly on every micro-batch; nothing ever applies `acc`.
import tensorflow as tf


def train(model, optimizer, dataset, accum_steps):
    acc = None
    for i, (x, y) in enumerate(dataset):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y)) / accum_steps
        grads = tape.gradient(loss, model.trainable_variables)
        acc = grads if acc is None else [a + g for a, g in zip(acc, grads)]
        optimizer.apply_gradients(zip(grads, model.trainable_variables))  # <- GAC102
        if (i + 1) % accum_steps == 0:
            acc = None
