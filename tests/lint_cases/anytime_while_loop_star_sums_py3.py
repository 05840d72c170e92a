# Modelled on thadikari/anytime's test_slices.py: a TF1 graph that splits a
# batch into slices of int(batch_size / num_splits) rows and sums the slices'
# gradients in a tf.while_loop whose body takes the sums as *accs and returns
# [i + 1, loss] + list(acc + g ...); the caller unpacks them with
# `_, loss, *grads = tf.while_loop(...)` and applies the sum undivided
# (GAC101). mean_step divides it by the number of slices first: clean.
import tensorflow as tf

batch_size, num_splits = 512, 4
features = tf.compat.v1.placeholder(tf.float32, [batch_size, 784])
labels = tf.compat.v1.placeholder(tf.int64, [batch_size])
opt = tf.compat.v1.train.GradientDescentOptimizer(0.01)
split_size = int(batch_size / num_splits)
weights = [tf.Variable(tf.zeros([784, 10])), tf.Variable(tf.zeros([10]))]


def slice_grads(i):
    x = features[i * split_size:(i + 1) * split_size]
    y = labels[i * split_size:(i + 1) * split_size]
    logits = tf.matmul(x, weights[0]) + weights[1]
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    return loss, tf.gradients(loss, weights)


def cond(i, _, *accs):
    return i < num_splits


def body(i, _, *accs):
    loss, grads = slice_grads(i)
    summed = list(acc + grad for acc, grad in zip(accs, grads))
    return [i + 1, loss] + summed


def sum_step():
    zeros = [tf.zeros_like(w) for w in weights]
    _, loss, *grads = tf.while_loop(cond, body, [tf.constant(0), 0.] + zeros)
    return opt.apply_gradients(zip(grads, weights))  # <- GAC101


def mean_step():
    zeros = [tf.zeros_like(w) for w in weights]
    _, loss, *grads = tf.while_loop(cond, body, [tf.constant(0), 0.] + zeros)
    return opt.apply_gradients(zip([g / num_splits for g in grads], weights))
