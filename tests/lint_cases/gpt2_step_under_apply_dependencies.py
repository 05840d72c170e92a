# Modelled on gpt-2's accumulate.py as its forks carry it (jchwenger/gpt-2):
# TF1 graph code that builds the apply op once and runs what follows under
# its control dependencies; here global_step advances there, so it counts
# effective steps, and a Python loop runs the apply once every N. Clean: no
# GAC107 (Python 2's ast, whose with statement has no items, once missed
# the dependency).
import tensorflow as tf


def build(loss, tvars, n):
    global_step = tf.train.get_or_create_global_step()
    opt = tf.train.AdamOptimizer(1e-3)
    sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in tvars]
    grads = tf.gradients(loss, tvars)
    add_ops = [s.assign_add(g) for s, g in zip(sums, grads)]
    apply_op = opt.apply_gradients([(s / n, v) for s, v in zip(sums, tvars)])
    with tf.control_dependencies([apply_op]):
        step_op = global_step.assign_add(1)
    zero_ops = [s.assign(tf.zeros_like(s)) for s in sums]
    return add_ops, step_op, zero_ops


def train(sess, loss, tvars, batches, n=4):
    add_ops, step_op, zero_ops = build(loss, tvars, n)
    sess.run(tf.global_variables_initializer())
    for i, feed in enumerate(batches):
        sess.run(add_ops, feed_dict=feed)
        if (i + 1) % n == 0:
            sess.run(step_op)
            sess.run(zero_ops)
