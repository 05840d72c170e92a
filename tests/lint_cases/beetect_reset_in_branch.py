# Modelled on jdubpark/beetect's YOLOv3 loop: the branch that applies also
# adds the micro-batch, divides by N, applies and makes the sums anew, so
# each apply holds one micro-batch (and the other branch applies the raw
# gradient); a progress-bar mean of the loss is no loss scaling. The
# bare `micro_step % n_micro` is true on N - 1 steps of every N, the
# reverse of a cycle's test (GAC109).
import tensorflow as tf


def train_epoch(model, dataset, optimizer, loss_fn, n_micro, micro_step):
    variables = model.trainable_variables
    sums = [tf.zeros_like(v) for v in variables]
    running, seen = 0.0, 0
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, variables)
        running += float(loss)
        seen += 1
        mean_loss = running / seen
        print("loss %.4f" % mean_loss)
        if micro_step % n_micro:  # <- GAC109
            sums = [s + g for s, g in zip(sums, grads)]
            sums = [s / n_micro for s in sums]
            optimizer.apply_gradients(zip(sums, variables))  # <- GAC102
            sums = [tf.zeros_like(v) for v in variables]
        else:
            optimizer.apply_gradients(zip(grads, variables))
        micro_step += 1
    return micro_step
