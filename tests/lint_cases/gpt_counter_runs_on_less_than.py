# Modelled on a TF2 GPT fine-tuning script (FAVOR attention, public, repo
# unknown): the count `acc` is made 0 once, before the epochs, and tested
# as `if acc < gr_acc: accumulate else: apply`; each epoch makes the sums
# anew (the partial cycle is dropped, GAC110), but the count runs on, so
# the first cycle of every later epoch is short (GAC109).
import tensorflow as tf


def train(model, optimizer, train_ds, epochs, gr_acc=8):
    @tf.function
    def grad_step(x, accum):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model.loss(x, model(x, training=True)))
        grads = tape.gradient(loss, model.trainable_weights)
        accum = [a + g for a, g in zip(accum, grads)]
        return accum

    @tf.function
    def apply_grad(accum):
        optimizer.apply_gradients(zip([a / gr_acc for a in accum], model.trainable_weights))

    acc = 0
    for epoch in range(epochs):
        accum = [tf.zeros_like(v) for v in model.trainable_variables]  # <- GAC110
        for step, x in enumerate(train_ds):
            if acc < gr_acc:  # <- GAC109
                accum = grad_step(x, accum)
                acc = acc + 1
            else:
                apply_grad(accum)
                accum = [tf.zeros_like(v) for v in model.trainable_variables]
                accum = grad_step(x, accum)
                acc = 1
