# Modelled on a SOLO instance-segmentation trainer (a tf.function epoch,
# public, repository unknown): the loop adds each batch to variables and a
# tf.cond applies their mean every N; after the loop a "flush" only zeroes
# the leftover sums and the counter, so each epoch's last partial cycle is
# dropped without being applied.
import tensorflow as tf


def accumulate(model, images, targets, sums):
    with tf.GradientTape() as tape:
        loss = model.loss(targets, model(images, training=True))
    for s, g in zip(sums, tape.gradient(loss, model.trainable_variables)):
        s.assign_add(g)
    return loss


@tf.function
def train_one_epoch(model, dataset, optimizer, steps, sums, counter):
    def apply_and_reset():
        optimizer.apply_gradients(zip([s / steps for s in sums], model.trainable_variables))
        for s in sums:
            s.assign(tf.zeros_like(s))
        counter.assign(0)

    def reset():
        for s in sums:
            s.assign(tf.zeros_like(s))
        counter.assign(0)

    for images, targets in dataset:
        accumulate(model, images, targets, sums)
        counter.assign_add(1)
        tf.cond(counter == steps, lambda: apply_and_reset(), lambda: None)

    tf.cond(counter > 0, lambda: reset(), lambda: None)  # <- GAC110
