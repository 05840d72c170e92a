# Modelled on a CycleWGAN for domain adaptation (TF1 graph, a class that
# builds and trains): with accumulate_grd set, it builds accumulators, ops
# that add the critic's gradients and count them, an apply of the sums over
# the count, and ops that zero them; the training loop then runs only the
# apply op, every batch. The adding ops are never run: each run applies
# sums no batch was added to (GAC102).
import tensorflow as tf


class CycleWGAN(object):
    def __init__(self, loss_d, n_critic, accumulate_grd=True):
        self.loss_d, self.n_critic = loss_d, n_critic
        self.accumulate_grd = accumulate_grd
        self.optimizer_d = tf.train.RMSPropOptimizer(5e-5)

    def build(self):
        d_vars = [v for v in tf.trainable_variables() if "discriminator" in v.name]
        gvs = self.optimizer_d.compute_gradients(self.loss_d, d_vars)
        if self.accumulate_grd:
            self.accum_vars = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                               for v in d_vars]
            self.count = tf.Variable(0.0, trainable=False)
            self.accum_ops = [acc.assign_add(g) for acc, (g, v) in zip(self.accum_vars, gvs)]
            self.accum_ops.append(self.count.assign_add(1.0))
            self.d_step = self.optimizer_d.apply_gradients(
                [(acc / self.count, v) for acc, (g, v) in zip(self.accum_vars, gvs)])
            self.zero_ops = [acc.assign(tf.zeros_like(acc)) for acc in self.accum_vars]
            self.zero_ops.append(self.count.assign(0.0))
        else:
            self.d_step = self.optimizer_d.apply_gradients(gvs)

    def train(self, sess, batches, iterations):
        for it in range(iterations):
            for _ in range(self.n_critic):
                feed = next(batches)
                _, d_loss = sess.run([self.d_step, self.loss_d], feed_dict=feed)  # <- GAC102
