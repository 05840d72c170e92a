# Modelled on the TF1 session loops of the corpus (the widely copied
# `accum_vars` / `accum_ops` / `train_step` answer), done right, written for
# this project: zeroed, N runs of the accumulation, one apply of the mean.
# No finding.
import tensorflow as tf

n_minibatches = 4
optimizer = tf.train.AdamOptimizer()
loss = tf.reduce_mean(tf.square(tf.get_variable("w", [1]) - 1.0))
tvs = tf.trainable_variables()
accum_vars = [tf.Variable(tf.zeros_like(tv.initialized_value()), trainable=False) for tv in tvs]
zero_ops = [tv.assign(tf.zeros_like(tv)) for tv in accum_vars]
gvs = optimizer.compute_gradients(loss, tvs)
accum_ops = [accum_vars[i].assign_add(gv[0]) for i, gv in enumerate(gvs)]
train_step = optimizer.apply_gradients(
    [(accum_vars[i] / n_minibatches, gv[1]) for i, gv in enumerate(gvs)])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(100):
        sess.run(zero_ops)
        for i in range(n_minibatches):
            sess.run(accum_ops)
        sess.run(train_step)
