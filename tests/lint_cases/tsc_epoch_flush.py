# Modelled on filipkro/tsc's custom per-sample loop: the sums are applied
# when `step % N == 0` with `step` from enumerate (a first cycle of one
# sample), and each epoch flushes what is left after its loop, divided by
# the real count (that part is correct).
import tensorflow as tf


def train(model, optimizer, loss_fn, samples, n_micro, n_epochs):
    for epoch in range(n_epochs):
        variables = model.trainable_variables
        sums = [tf.zeros_like(v) for v in variables]
        last = 0
        for step, (x, y) in enumerate(samples):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, variables)
            sums = [s + g for s, g in zip(sums, grads)]
            if step % n_micro == 0:  # <- GAC109
                sums = [s / n_micro for s in sums]
                optimizer.apply_gradients(zip(sums, variables))
                last = step
                sums = [tf.zeros_like(v) for v in variables]
        left = step - last
        if left > 0:
            optimizer.apply_gradients(zip([s / left for s in sums], variables))
