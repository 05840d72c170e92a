# Modelled on the eager epoch loops of the corpus (a Python `global_step`
# counting micro-batches across epochs to gate the apply), in a variant
# written for this project: the Python counter only decides the apply and
# is no TF step a schedule reads (no GAC107); each epoch's sums are made
# anew, so its last partial cycle is dropped.
import tensorflow as tf


def train(model, optimizer, dataset, epochs, grad_accum_steps):
    global_step = 0
    for epoch in range(epochs):
        accum = [tf.zeros_like(v) for v in model.trainable_variables]  # <- GAC110
        for x, y in dataset:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y)) / grad_accum_steps
            grads = tape.gradient(loss, model.trainable_variables)
            accum = [a + g for a, g in zip(accum, grads)]
            global_step += 1
            if global_step % grad_accum_steps == 0:
                optimizer.apply_gradients(zip(accum, model.trainable_variables))
                accum = [tf.zeros_like(v) for v in model.trainable_variables]
        print("epoch %d, step %d" % (epoch, global_step))
