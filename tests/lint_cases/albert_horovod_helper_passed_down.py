# Modelled on aws-samples/deep-learning-models' ALBERT pretraining script:
# an accumulator object is made in main and handed down by keyword to the
# micro-batch step (which adds to it) and to the all-reduce step (which
# reads its sums); there the gradients pass through a chain of
# ``grads = f(grads)`` (unscale, densify, clip, all-reduce) and are applied
# as a sum, while only the logged loss is divided by N.
import horovod.tensorflow as hvd
import tensorflow as tf


def micro_batch(model, opt, accumulator, x, y):
    with tf.GradientTape() as tape:
        loss = model.loss(y, model(x, training=True))
        scaled = opt.get_scaled_loss(loss)
    accumulator(tape.gradient(scaled, model.trainable_variables))
    return loss


def reduce_and_apply(model, opt, accumulator, loss):
    grads = accumulator.gradients
    grads = opt.get_unscaled_gradients(grads)
    grads = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads]
    grads, _ = tf.clip_by_global_norm(grads, clip_norm=1.0)
    grads = [hvd.allreduce(g) for g in grads]
    opt.apply_gradients(zip(grads, model.trainable_variables))  # <- GAC101
    accumulator.reset()
    return hvd.allreduce(loss)


def train_step(model, opt, accumulator, batch, n_micro):
    total_loss = 0.0
    for i in range(n_micro):
        total_loss += micro_batch(model=model, opt=opt, accumulator=accumulator,
                                  x=batch["x"][i], y=batch["y"][i])
    total_loss /= n_micro
    return reduce_and_apply(model=model, opt=opt, accumulator=accumulator, loss=total_loss)


def main(model, opt, dataset, n_micro, make_accumulator):
    gradient_accumulator = make_accumulator()
    for batch in dataset:
        train_step(model=model, opt=opt, accumulator=gradient_accumulator, batch=batch,
                   n_micro=n_micro)
