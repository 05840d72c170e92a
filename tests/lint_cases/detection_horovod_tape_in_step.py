# Modelled on bioothod/object_detection's Horovod trainer: the tf.function
# step wraps its tape in hvd.DistributedGradientTape and returns the
# gradients (all-reduced every micro-batch); the epoch loop sums them and
# applies the mean every N, and what is left after the loop.
import horovod.tensorflow as hvd
import tensorflow as tf


def train(model, optimizer, loss_fn, dataset, n_micro):
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        tape = hvd.DistributedGradientTape(tape)  # <- GAC104
        return loss, tape.gradient(loss, model.trainable_variables)

    sums, count = [], 0
    for x, y in dataset:
        loss, grads = step(x, y)
        if not sums:
            sums = grads
        else:
            sums = [s + g for s, g in zip(sums, grads)]
        count += 1
        if count == n_micro:
            optimizer.apply_gradients(zip([s / count for s in sums], model.trainable_variables))
            sums, count = [], 0
    if sums:
        optimizer.apply_gradients(zip([s / count for s in sums], model.trainable_variables))
