# Modelled on a DeblurGAN training script in Keras (TF2, public,
# repository not named by the index): the generator's gradients are to be
# accumulated over N batches, so the script takes them from the loss that
# the combined model's train_on_batch returns, inside a GradientTape, and
# adds them to NumPy sums applied every N. But train_on_batch has already
# stepped the combined model's optimizer on each of those batches
# (GAC102); the sums are applied undivided (GAC101); and each epoch makes
# the sums anew, dropping its last partial cycle (GAC110).
import numpy as np
import tensorflow as tf


def train(generator, critic, combined, g_opt, x_train, y_train, epochs, batch, n_micro):
    real = np.ones((batch, 1))
    for epoch in range(epochs):
        order = np.random.permutation(len(x_train))
        sums = [np.zeros_like(w) for w in generator.trainable_weights]  # <- GAC110
        for step in range(len(x_train) // batch):
            rows = order[step * batch:(step + 1) * batch]
            blurred, sharp = x_train[rows], y_train[rows]
            critic.train_on_batch(sharp, real)
            critic.trainable = False
            with tf.GradientTape() as tape:
                g_loss = combined.train_on_batch(blurred, [sharp, real])  # <- GAC102
            grads = tape.gradient(g_loss, generator.trainable_weights)
            for i, g in enumerate(grads):
                sums[i] += g
            if (step + 1) % n_micro == 0:
                g_opt.apply_gradients(zip(sums, generator.trainable_weights))  # <- GAC101
                sums = [np.zeros_like(w) for w in generator.trainable_weights]
            critic.trainable = True
