# Modelled on sathishram12/pose-detection's TF2 training script: the epoch
# loop makes the gradient list anew, the batch loop adds a tf.function
# step's gradients to it and applies their mean every 50 batches. The
# batches after the last apply of an epoch are dropped when the next epoch
# starts a new list (GAC110, "dropped", not "carried").
import tensorflow as tf


@tf.function
def train_one_step(model, x, y, loss_fn):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    return tape.gradient(loss, model.trainable_variables), loss


def train(model, optimizer, loss_fn, dataset, epochs):
    for epoch in range(epochs):
        step = 0
        accum_gradient = [tf.zeros_like(v) for v in model.trainable_variables]  # <- GAC110
        for x, y in dataset:
            step += 1
            grads, loss = train_one_step(model, x, y, loss_fn)
            accum_gradient = [a + g for a, g in zip(accum_gradient, grads)]
            if step % 50 == 0:
                accum_gradient = [a / 50 for a in accum_gradient]
                optimizer.apply_gradients(zip(accum_gradient, model.trainable_variables))
                accum_gradient = [tf.zeros_like(v) for v in model.trainable_variables]
