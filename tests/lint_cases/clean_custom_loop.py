# Modelled on the TensorFlow guide's custom loop with accumulation done
# right: the sum divided by N, applied on every N-th micro-batch counted from
# 1, the clip on the mean, the schedule on the applied steps. Clean.
import tensorflow as tf

N = 4
sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]


@tf.function
def add_micro_batch(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    for s, g in zip(sums, grads):
        s.assign_add(g)


@tf.function
def apply_mean():
    means = [s / N for s in sums]
    means, _ = tf.clip_by_global_norm(means, 1.0)
    optimizer.apply_gradients(zip(means, model.trainable_variables))
    for s in sums:
        s.assign(tf.zeros_like(s))


for step, (x, y) in enumerate(dataset):
    add_micro_batch(x, y)
    if (step + 1) % N == 0:
        apply_mean()
