# Modelled on the eager loops of the accumulation tutorials read for the
# corpus, in a variant written for this project: N is a one-letter `n`, the
# mean loss is divided by it and the sum is divided by it again at the apply.
import tensorflow as tf


def train(model, dataset, n, optimizer):
    acc = [tf.zeros_like(v) for v in model.trainable_variables]
    for i, (x, y) in enumerate(dataset):  # <- GAC110
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.mse(y, model(x))) / n
        grads = tape.gradient(loss, model.trainable_variables)
        acc = [a + g for a, g in zip(acc, grads)]
        if (i + 1) % n == 0:
            acc = [a / n for a in acc]
            optimizer.apply_gradients(zip(acc, model.trainable_variables))  # <- GAC108
            acc = [tf.zeros_like(v) for v in model.trainable_variables]
