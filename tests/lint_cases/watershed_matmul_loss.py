# Modelled on a TF1 learned-watershed segmentation model (public, repo
# unknown; three sets held variants of it): the loss is
# tf.matmul(weights, altitudes), a weighted sum over the edges of each
# batch, so the gradients summed over the batches and applied once are
# the gradient of the whole image's sum, as one batch of all edges would
# give. Clean.
import tensorflow as tf


class EdgeModel(object):
    def __init__(self, altitudes, learning_rate=1e-3):
        self.gradient_weights = tf.placeholder(tf.float32, shape=[1, None])
        self.altitudes = altitudes
        loss = tf.matmul(self.gradient_weights, self.altitudes)
        opt = tf.train.AdamOptimizer(learning_rate)
        tvs = tf.trainable_variables()
        accum_vars = [tf.Variable(tf.zeros_like(tv.initialized_value()), trainable=False)
                      for tv in tvs]
        self.zero_ops = [tv.assign(tf.zeros_like(tv)) for tv in accum_vars]
        gvs = opt.compute_gradients(loss, tvs)
        self.accum_ops = [accum_vars[i].assign_add(gv[0]) for i, gv in enumerate(gvs)]
        self.train_step = opt.apply_gradients([(accum_vars[i], gv[1]) for i, gv in enumerate(gvs)])

    def train_image(self, sess, edge_batches):
        sess.run(self.zero_ops)
        for feed in edge_batches:
            sess.run(self.accum_ops, feed_dict=feed)
        sess.run(self.train_step)
