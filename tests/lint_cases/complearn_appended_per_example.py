# Modelled on dapatil211/LIA_Comp_Learning (cpg_model.py): per-example
# gradients appended to a Python list and applied as the sum of the
# stacked list; the branch that applies skips adding the current example's
# gradient, so each cycle uses N + 1 examples and drops one.
import tensorflow as tf


def train(model_fn, dataset, optimizer, trainable_vars, effective_batch_size, epochs):
    for epoch in range(epochs):
        accumulated_step = 0
        accumulated_grads = []
        for image, label in dataset:
            with tf.GradientTape() as tape:
                loss = model_fn(image, label)
            grads = tape.gradient(loss, trainable_vars)
            if accumulated_step < effective_batch_size:  # <- GAC109
                accumulated_grads.append(grads)
                accumulated_step += 1
            else:
                grads = zip(*accumulated_grads)
                grads = [tf.reduce_sum(tf.stack(g, axis=-1), axis=-1) for g in grads]
                optimizer.apply_gradients(zip(grads, trainable_vars))  # <- GAC101
                accumulated_step = 0
                accumulated_grads = []
        if accumulated_step > 0:
            grads = [tf.reduce_sum(tf.stack(g, axis=-1), axis=-1)
                     for g in zip(*accumulated_grads)]
            optimizer.apply_gradients(zip(grads, trainable_vars))
