# Modelled on a human-activity-recognition (HHAR) leave-one-subject-out
# benchmark's TensorFlow branch (TF2 eager): the loss is divided by N, the
# gradients summed in a fresh list each epoch, and applied every N batches
# or when `(step + 1) == num_steps`, the epoch's batch count computed as
# ceil(examples / batch size). The partial cycle is applied at the epoch's
# last batch: nothing is dropped or carried. Correct.
import numpy as np
import tensorflow as tf


def train(model, optimizer, loss_fn, features, labels, epochs, batch_size, grad_accum):
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(batch_size)
    num_steps = int(np.ceil(len(features) / batch_size))
    for epoch in range(epochs):
        sums = [tf.zeros_like(w) for w in model.trainable_variables]
        for step, (x, y) in enumerate(dataset):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True)) / grad_accum
            grads = tape.gradient(loss, model.trainable_variables)
            sums = [s + g for s, g in zip(sums, grads)]
            if (step + 1) % grad_accum == 0 or (step + 1) == num_steps:
                optimizer.apply_gradients(zip(sums, model.trainable_variables))
                sums = [tf.zeros_like(w) for w in model.trainable_variables]
