# Modelled on a TF2 BERT-style pretraining script (public, repo unknown):
# a Python loop over micro-steps; step 0 only builds the model and makes
# the sums (its batch adds nothing), (step + 1) % N == 0 adds the last
# micro-batch and applies, every other step adds. With the loss divided
# by N, the first cycle applies N - 1 micro-batches' worth.
import tensorflow as tf

ACCUM = 8


def build(model, batch):
    model(batch)
    return [tf.zeros_like(v) for v in model.trainable_variables]


@tf.function
def accumulate(model, loss_fn, batch, labels, sums):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(batch)) / ACCUM
    grads = tape.gradient(loss, model.trainable_variables)
    return [s + g for s, g in zip(sums, grads)]


@tf.function
def update(model, loss_fn, optimizer, batch, labels, sums):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(batch)) / ACCUM
    grads = tape.gradient(loss, model.trainable_variables)
    sums = [s + g for s, g in zip(sums, grads)]
    optimizer.apply_gradients(zip(sums, model.trainable_variables))
    return [tf.zeros_like(v) for v in model.trainable_variables]


def pretrain(model, loss_fn, optimizer, iterator, total_steps):
    sums = None
    for step in range(total_steps * ACCUM):
        batch, labels = next(iterator)
        if step == 0:
            sums = build(model, batch)
        elif (step + 1) % ACCUM == 0:  # <- GAC109
            sums = update(model, loss_fn, optimizer, batch, labels, sums)
        else:
            sums = accumulate(model, loss_fn, batch, labels, sums)
