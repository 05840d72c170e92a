# Modelled on the TF1 session loops of the corpus (the widely copied
# `accum_vars` / `accum_ops` / `train_step` answer), in a variant written
# for this project: ops built by a helper and unpacked by the caller, whose
# counter is made 0 and advanced after the `% n` test, so the first update
# comes after one micro-batch.
import tensorflow as tf


def build(loss, n):
    optimizer = tf.train.AdamOptimizer(1e-3)
    tvars = tf.trainable_variables()
    accum_vars = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                  for v in tvars]
    grads = tf.gradients(loss / n, tvars)
    accum_ops = [a.assign_add(g) for a, g in zip(accum_vars, grads)]
    train_step = optimizer.apply_gradients(zip(accum_vars, tvars))
    zero_ops = [a.assign(tf.zeros_like(a)) for a in accum_vars]
    return accum_ops, train_step, zero_ops


def train(sess, loss, n):
    accum_ops, train_step, zero_ops = build(loss, n)
    step = 0
    while True:
        sess.run(accum_ops)
        if step % n == 0:
            sess.run(train_step)  # <- GAC109
            sess.run(zero_ops)
        step += 1
