# Modelled on a prune-and-regrow sparse MobileNet trainer (BloodMNIST
# patches, TF2 eager): with a micro-batch size set, each batch of the epoch
# is split into slices inside the step; the sums are made as zeros in that
# branch, the slices' gradients added, divided by the slice count and
# applied once, all in the same arm of the `if`. Nothing outlives the batch:
# no finding (no partial cycle crosses the epoch).
import tensorflow as tf


def train(model, optimizer, loss_fn, dataset, max_epochs, microbatch_size=None):
    for epoch in range(max_epochs):
        for x_batch, y_batch in dataset:
            if microbatch_size is None:
                with tf.GradientTape() as tape:
                    loss = loss_fn(y_batch, model(x_batch, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            else:
                accum_grads = [tf.zeros_like(v) for v in model.trainable_variables]
                size = tf.shape(x_batch)[0]
                slices = tf.math.ceil(size / microbatch_size).numpy()
                for i in range(0, size, microbatch_size):
                    with tf.GradientTape() as tape:
                        loss = loss_fn(y_batch[i:i + microbatch_size],
                                       model(x_batch[i:i + microbatch_size], training=True))
                    grads = tape.gradient(loss, model.trainable_variables)
                    accum_grads = [a + g for a, g in zip(accum_grads, grads)]
                mean = [g / slices for g in accum_grads]
                optimizer.apply_gradients(zip(mean, model.trainable_variables))
