# Modelled on the Caffe-style iter_size loops of TF1 detection trainers:
# the train op is built under the control dependencies of the accumulation
# op, so its run adds the cycle's last batch itself; the loop before it
# runs the accumulation op iter_size - 1 times. Each cycle holds iter_size
# micro-batches, divided by iter_size: no finding.
import tensorflow as tf


def build(optimizer, loss, iter_size):
    pairs = optimizer.compute_gradients(loss)
    sums = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False) for _, v in pairs]
    accum_op = tf.group(*[s.assign_add(g) for s, (g, _) in zip(sums, pairs)])
    with tf.control_dependencies([accum_op]):
        train_op = optimizer.apply_gradients(
            [(s / iter_size, v) for s, (_, v) in zip(sums, pairs)])
    zero_op = tf.group(*[s.assign(tf.zeros_like(s)) for s in sums])
    return accum_op, train_op, zero_op


def run(sess, ops, next_feed, iter_size, steps):
    accum_op, train_op, zero_op = ops
    for step in range(steps):
        sess.run(zero_op)
        for _ in range(iter_size - 1):
            sess.run(accum_op, feed_dict=next_feed())
        sess.run(train_op, feed_dict=next_feed())
