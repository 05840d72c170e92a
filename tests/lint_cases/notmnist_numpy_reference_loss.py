# Modelled on a notMNIST regression assignment (TF1 session, public, repo
# unknown): the widely copied accum_vars / zero_ops / accum_ops snippet
# applies the undivided sum, and the same file computes a NumPy reference
# loss as (1/N) * sum(...), a mean over examples that no gradient is taken
# of; it is not the accumulated loss scaled by 1/N.
import numpy as np
import tensorflow as tf


def cross_entropy(W, b, x, y, reg):
    N = x.shape[0]
    z = 1.0 / (1.0 + np.exp(-(x.dot(W) + b)))
    loss = (1 / N) * np.sum(-y * np.log(z) - (1 - y) * np.log(1 - z))
    return loss + (reg / 2) * np.linalg.norm(W) ** 2


def numpy_descent(W, b, x, y, alpha, iterations, reg):
    for _ in range(iterations):
        print(cross_entropy(W, b, x, y, reg))
    return W, b


def train_minibatch(loss, feeds, learning_rate, minibatches):
    opt = tf.train.AdamOptimizer(learning_rate)
    tvs = tf.trainable_variables()
    accum_vars = [tf.Variable(tf.zeros_like(tv.initialized_value()), trainable=False) for tv in tvs]
    zero_ops = [v.assign(tf.zeros_like(v)) for v in accum_vars]
    gvs = opt.compute_gradients(loss, tvs)
    accum_ops = [accum_vars[i].assign_add(gv[0]) for i, gv in enumerate(gvs)]
    apply_ops = opt.apply_gradients([(accum_vars[i], tv) for i, tv in enumerate(tvs)])  # <- GAC101
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    for batch in feeds:
        sess.run(zero_ops)
        for j in range(minibatches):
            sess.run(accum_ops, feed_dict=batch[j])
        sess.run(apply_ops)
