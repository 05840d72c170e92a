# Modelled on the TF1 session loops of the corpus (the widely copied
# `accum_vars` / `accum_ops` / `train_step` answer), in a variant written
# for this project: the apply op is run in the same loop pass as the
# accumulation, with nothing deciding when, so it applies every micro-batch.
import tensorflow as tf


def main(n):
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    loss = tf.reduce_mean(tf.square(tf.get_variable("w", [1]) - 1.0)) / n
    tvars = tf.trainable_variables()
    acc = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False) for v in tvars]
    grads = tf.gradients(loss, tvars)
    accum = tf.group(*[a.assign_add(g) for a, g in zip(acc, grads)])
    apply_op = optimizer.apply_gradients(zip(acc, tvars))
    reset = tf.group(*[a.assign(tf.zeros_like(a)) for a in acc])
    with tf.Session() as sess:
        for step in range(1000):
            sess.run(accum)
            sess.run(apply_op)  # <- GAC102
            if step % n == 0:
                sess.run(reset)
