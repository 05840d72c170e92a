# Modelled on a relevance-guided MRI classifier's hand-written fit loop
# (TF2 eager, Keras callbacks): each batch's gradients, from a tf.function,
# are divided by N and added to a Python list, applied every N batches or
# when `(step_index + 1) == epochs`, meant as the epoch's last batch. It
# compares the batch index with the number of epochs (GAC109), so the
# partial cycle is applied at a wrong batch or never, and the next epoch
# makes the sums anew, dropping it (GAC110).
import tensorflow as tf


def fit(model, optimizer, train_step, adapter, epochs, accumulate_steps, callbacks):
    for epoch in range(epochs):
        callbacks.on_epoch_begin(epoch)
        averaged_grads = None  # <- GAC110
        iterator = iter(adapter.get_dataset())
        for step_index in range(adapter.get_size()):
            x, y, sample_weight = tf.keras.utils.unpack_x_y_sample_weight(next(iterator))
            grads, logs = train_step(x, y, sample_weight)
            if averaged_grads is None:
                averaged_grads = [g / accumulate_steps for g in grads]
            else:
                for g_index, g in enumerate(grads):
                    averaged_grads[g_index] += g / accumulate_steps
            if (step_index + 1) % accumulate_steps == 0 or (step_index + 1) == epochs:  # <- GAC109
                optimizer.apply_gradients(zip(averaged_grads, model.trainable_weights))
                averaged_grads = None
            callbacks.on_train_batch_end(step_index, logs=logs)
