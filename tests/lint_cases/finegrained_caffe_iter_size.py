# Modelled on a TF1 fine-grained classification script (public, repo
# unknown) that copies Caffe's iter_size: it runs the accumulation op
# iter_size - 1 times, then the apply op (with the loss and accuracy)
# once; the apply op divides the sums by iter_size but does not add the
# gradient of the batch its own run reads, so each cycle holds
# iter_size - 1 batches, divided by iter_size.
import tensorflow as tf


def train(model, trainable_vars, global_step, handle, training_handle, iter_size, iters):
    optimizer = tf.train.MomentumOptimizer(0.01, momentum=0.9)
    accum_vars = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                  for v in trainable_vars]
    zero_ops = [v.assign(tf.zeros_like(v)) for v in accum_vars]
    grads = optimizer.compute_gradients(model.train_loss, trainable_vars)
    accum_ops = [accum_vars[i].assign_add(gv[0]) for i, gv in enumerate(grads)]
    train_op = optimizer.apply_gradients(
        [(accum_vars[i] / iter_size, gv[1]) for i, gv in enumerate(grads)],
        global_step=global_step)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    for _ in range(iters):
        feed = {handle: training_handle}
        for _ in range(iter_size - 1):
            sess.run(accum_ops, feed)
        loss, _ = sess.run([model.train_loss, train_op], feed)  # <- GAC109
        sess.run(zero_ops)
