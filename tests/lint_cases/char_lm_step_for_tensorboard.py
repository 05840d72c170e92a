# Modelled on a Chinese character-level LM trainer (Keras 3 / TF eager,
# pretrain, SFT and DPO loops): a Python global_step advances on every
# micro-batch, but only TensorBoard reads it, also through the learning
# rate it shows (tf.summary.scalar("learning_rate",
# optimizer.learning_rate(global_step))); the optimizer's schedule counts
# its own iterations, one per apply: no GAC107. The sums of a partial
# cycle are lost when the function returns (GAC110).
import tensorflow as tf


def train(model, optimizer, dataset, n, writer):
    global_step = 0
    sums = [tf.zeros_like(v) for v in model.trainable_variables]
    for i, (x, y) in enumerate(dataset):  # <- GAC110
        with tf.GradientTape() as tape:
            loss = model.loss(x, y) / n
        sums = [s + g for s, g in zip(sums, tape.gradient(loss, model.trainable_variables))]
        if (i + 1) % n == 0:
            optimizer.apply_gradients(zip(sums, model.trainable_variables))
            sums = [tf.zeros_like(v) for v in model.trainable_variables]
        global_step += 1
        with writer.as_default():
            tf.summary.scalar("learning_rate", optimizer.learning_rate(global_step), global_step=global_step)
