# Modelled on a U-Net table-segmentation trainer (TF2 eager, public, repo
# unknown): each image of a batch gets its own tape, but the line that adds
# the gradients to the sums is dedented below the per-image loop. Each
# pass overwrites `grads`; only the last image's gradients are summed and
# then divided by the batch size (GAC109).
import tensorflow as tf

BATCH_SIZE = 16


def train_epoch(model, optim, loss_fn, batches):
    for batch_x, batch_y in batches:
        sums = [tf.zeros_like(w) for w in model.trainable_weights]
        for x, y in zip(batch_x, batch_y):
            with tf.GradientTape() as tape:
                pred = model(tf.expand_dims(x, 0), training=True)
                loss = loss_fn(tf.expand_dims(y, 0), pred)
            grads = tape.gradient(loss, model.trainable_weights)
        sums = [s + g for s, g in zip(sums, grads)]  # <- GAC109
        sums = [s / BATCH_SIZE for s in sums]
        optim.apply_gradients(zip(sums, model.trainable_weights))
