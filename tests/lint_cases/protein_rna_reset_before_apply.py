# Modelled on a TF2 protein-RNA transformer trainer (eager, public, repo
# unknown): per record, when record_count % N == 0 the list of sums is
# made anew from this record's gradients, otherwise they are added; then,
# under the same test (and record_count != 0), the list is applied. In
# the step that applies, the sums were just reset: each apply holds one
# record, and the N - 1 before it are lost.
import tensorflow as tf


def train_record(model, loss_fn, optimizer, config, record, label, record_count):
    with tf.GradientTape() as tape:
        loss = loss_fn(label, model(record, training=True))
    gradients = tape.gradient(loss, model.trainable_variables)
    if record_count % config.num_accum_grad == 0:
        config.accum_gradient = gradients
    else:
        config.accum_gradient = [a + g for a, g in zip(config.accum_gradient, gradients)]
    if record_count % config.num_accum_grad == 0 and record_count != 0:  # <- GAC109
        optimizer.apply_gradients(zip(config.accum_gradient, model.trainable_variables))  # <- GAC101
    return loss
