# Modelled on a TF1 image classifier trained with a Caffe-style
# `iter_size` (public, repository not named by the index): the graph keeps
# tf.Variable sums and an apply of sums / iter_size; the session loop runs
# the accumulation op iter_size - 1 times, builds the feed once more and
# runs the apply op with the loss. The apply op does not depend on the
# accumulation, so the batch its run reads is not added: each cycle
# applies N - 1 micro-batches divided by N (GAC109).
import tensorflow as tf


def train(config, loss, handle, train_handle, max_iter):
    optimizer = tf.train.MomentumOptimizer(config.lr, 0.9)
    params = tf.trainable_variables()
    grads = optimizer.compute_gradients(loss, params)
    sums = [tf.Variable(tf.zeros_like(p.initialized_value()), trainable=False)
            for p in params]
    clear = [s.assign(tf.zeros_like(s)) for s in sums]
    accumulate = [sums[i].assign_add(g) for i, (g, _) in enumerate(grads)]
    train_op = optimizer.apply_gradients(
        [(sums[i] / config.iter_size, v) for i, (_, v) in enumerate(grads)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for it in range(max_iter):
            for _ in range(config.iter_size - 1):
                feed = {handle: train_handle}
                sess.run(accumulate, feed)
            feed = {handle: train_handle}
            value, _ = sess.run([loss, train_op], feed)  # <- GAC109
            sess.run(clear)
            if it % 100 == 0:
                print(it, value)
