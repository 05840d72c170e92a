# Modelled on nikita-astronaut/dl_for_VMC's training script (TF1 graph):
# the loss is the mean of a ratio (a division inside tf.reduce_mean, which
# does not scale the loss by 1/N); the gradients of n_minibatches slices
# are summed into variables and applied with Adam undivided. Dividing the
# learning rate by n_minibatches instead only matches plain SGD (GAC101).
import tensorflow as tf


def build(h_nm, psi_bra, psi_ket, n_minibatches, lr):
    lr /= n_minibatches
    learning_rate = tf.placeholder(tf.float32, shape=[])
    loss = tf.reduce_mean(h_nm * psi_ket / psi_bra)
    opt = tf.train.AdamOptimizer(learning_rate=learning_rate)
    tvs = tf.trainable_variables()
    accum_vars = [tf.Variable(tf.zeros_like(tv.initialized_value()), trainable=False)
                  for tv in tvs]
    zero_ops = [a.assign(tf.zeros_like(a)) for a in accum_vars]
    gvs = opt.compute_gradients(loss, tvs)
    accum_ops = [accum_vars[i].assign_add(gv[0]) for i, gv in enumerate(gvs)]
    train_step = opt.apply_gradients(  # <- GAC101
        [(accum_vars[i], gv[1]) for i, gv in enumerate(gvs)])
    return zero_ops, accum_ops, train_step, learning_rate, lr
