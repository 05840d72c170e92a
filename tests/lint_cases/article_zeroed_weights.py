# Modelled on a much-read blog post's custom loop, in the variant that
# "resets" by zeroing the model's weights instead of the accumulators.
import tensorflow as tf

N = 4
sums = [tf.zeros_like(v) for v in model.trainable_variables]
for step, (x, y) in enumerate(dataset):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x)) / N
    grads = tape.gradient(loss, model.trainable_variables)
    sums = [s + g for s, g in zip(sums, grads)]
    if (step + 1) % N == 0:
        optimizer.apply_gradients(zip(sums, model.trainable_variables))
        for var in model.trainable_variables:
            var.assign(tf.zeros_like(var))  # <- GAC103


def reset(variables):
    # A parameter merely named `variables`: the caller's accumulators.
    for v in variables:
        v.assign(tf.zeros_like(v))
