# Modelled on wangheda/Carvana-NoOne's TF1 trainer: the sums are scaled by
# 1/N inside a clipping helper that takes the scale as a keyword argument
# (correct: nothing to report).
import tensorflow as tf


def train_op(optimizer, loss, every_n, max_norm, global_step):
    scale = 1.0 / every_n
    variables = tf.trainable_variables()
    sums = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
            for v in variables]
    zero = [s.assign(tf.zeros_like(s)) for s in sums]
    pairs = optimizer.compute_gradients(loss, variables)
    accumulate = [sums[i].assign_add(g) for i, (g, _) in enumerate(pairs)]
    clipped = clip_norms(sums, max_norm=max_norm, scale=scale)
    apply = optimizer.apply_gradients([(clipped[i], v) for i, (_, v) in enumerate(pairs)],
                                      global_step=global_step)
    return zero, accumulate, apply


def clip_norms(tensors, max_norm, scale=1.0):
    return [tf.clip_by_norm(t * scale, max_norm) for t in tensors]
