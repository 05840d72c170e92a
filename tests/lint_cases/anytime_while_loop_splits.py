# Modelled on thadikari/anytime (test_slices.py): a batch cut into splits,
# whose gradients a tf.while_loop sums in its loop variables; the loop's
# output, the sum over the splits of each split's mean-loss gradient, is
# applied undivided. (The original carries the sums as `*accs`, a shape
# lint does not follow; this case keeps them in one list.)
import tensorflow as tf


def build(model, optimizer, features, labels, num_splits):
    xs = tf.split(features, num_splits)
    ys = tf.split(labels, num_splits)

    def cond(i, sums):
        return i < num_splits

    def body(i, sums):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(tf.gather(xs, i)) - tf.gather(ys, i)))
        grads = tape.gradient(loss, model.trainable_variables)
        return i + 1, [s + g for s, g in zip(sums, grads)]

    zeros = [tf.zeros_like(v) for v in model.trainable_variables]
    _, total = tf.while_loop(cond, body, [tf.constant(0), zeros])
    return optimizer.apply_gradients(zip(total, model.trainable_variables))  # <- GAC101
