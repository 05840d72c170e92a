# Modelled on an MRI trajectory-learning test loop (TF2 eager, public,
# repo unknown): when the counter reaches a multiple of N the sums are
# applied without the current batch, whose gradients then start the next
# cycle; the other steps add theirs. The first cycle holds N - 1 batches
# (each divided by N through the loss), every later one N; and the sums
# left after the last apply are lost when the function returns.
import tensorflow as tf


def fit_steps(model, batches, accum_steps=4):
    ctr = 0
    sums = [tf.zeros_like(v) for v in model.trainable_variables]
    for image, reference in batches:  # <- GAC110
        with tf.GradientTape() as tape:
            ctr += 1
            loss = tf.reduce_mean(model.loss(reference, model(image))) / accum_steps
        grads = tape.gradient(loss, model.trainable_variables)
        if ctr % accum_steps == 0:  # <- GAC109
            model.optimizer.apply_gradients(zip(sums, model.trainable_variables))
            sums = grads
        else:
            for i, g in enumerate(grads):
                sums[i] += g
