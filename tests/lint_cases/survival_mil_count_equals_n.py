# Modelled on a TF1 attention-MIL survival model (a slide-level trainer
# that sums gradients over slides and applies every N slides, public,
# repository unknown): the cycle is counted by hand, ``if count == N:``
# then ``count = 0``, and the count starts again each epoch while the
# sums of the epoch's last partial cycle are neither applied nor zeroed.
import tensorflow as tf


def train(sess, model, slides, epochs, per_update):
    tvars = tf.compat.v1.trainable_variables()
    sums = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False) for v in tvars]
    zero_ops = [s.assign(tf.zeros_like(s)) for s in sums]
    grads = tf.gradients(model.loss, tvars)
    accum_ops = [s.assign_add(g / per_update) for s, g in zip(sums, grads)]
    train_op = tf.compat.v1.train.AdamOptimizer(1e-4).apply_gradients(zip(sums, tvars))
    sess.run(tf.compat.v1.global_variables_initializer())
    for epoch in range(epochs):  # <- GAC110
        count = 0
        for slide in slides:
            sess.run(accum_ops, feed_dict={model.inputs: slide})
            count += 1
            if count == per_update:
                sess.run(train_op)
                count = 0
                sess.run(zero_ops)
