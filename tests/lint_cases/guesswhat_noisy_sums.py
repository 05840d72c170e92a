# Modelled on zipengxuc/ADVSE-GuessWhat's optimizer builder (TF1): optional
# gradient noise whose stddev decays (a division, but not of the gradient),
# then a helper returns (zero, accumulate, pairs) and the pairs of raw sums
# are applied.
import tensorflow as tf


def build(loss, variables, noise_std, step):
    optimizer = tf.train.AdamOptimizer(1e-4)
    pairs = optimizer.compute_gradients(loss, var_list=variables)
    if noise_std > 0:
        pairs = add_noise(pairs, step, noise_std)
    zero, accumulate, summed = accumulation_ops(pairs)
    return zero, accumulate, optimizer.apply_gradients(summed)  # <- GAC101


def add_noise(pairs, step, std):
    scale = std / tf.pow(tf.cast(step + 1, tf.float32), 0.55)
    return [(g + tf.random_normal(tf.shape(g), stddev=scale), v) for g, v in pairs]


def accumulation_ops(pairs):
    sums = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
            for _, v in pairs]
    zero = [s.assign(tf.zeros_like(s)) for s in sums]
    accumulate = [sums[i].assign_add(g) for i, (g, _) in enumerate(pairs)]
    return zero, accumulate, [(sums[i], v) for i, (_, v) in enumerate(pairs)]
