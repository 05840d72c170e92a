# Modelled on a CIFAR image classifier's eager training loop (TF2, public,
# repository not named by the index): the sums are made anew each epoch,
# and the apply runs when the counter reaches N or when a flag names the
# epoch's last batch (`is_last_batch = batch_idx == batches_per_epoch`).
# The flag flushes the partial cycle at each epoch's end: clean (no
# GAC110).
import tensorflow as tf


def train(model, optimizer, loss_fn, train_ds, epochs, n_micro, batches_per_epoch):
    variables = model.trainable_variables
    for epoch in range(epochs):
        sums = [tf.zeros_like(v) for v in variables]
        count = 0
        for batch_idx, (images, labels) in enumerate(train_ds, start=1):
            with tf.GradientTape() as tape:
                loss = loss_fn(labels, model(images, training=True)) / float(n_micro)
            grads = tape.gradient(loss, variables)
            sums = [s + g for s, g in zip(sums, grads)]
            count += 1
            is_last_batch = batch_idx == batches_per_epoch
            if count == n_micro or is_last_batch:
                optimizer.apply_gradients(zip(sums, variables))
                sums = [tf.zeros_like(v) for v in variables]
                count = 0
