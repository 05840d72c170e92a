# Modelled on jimth001/my-tf-framework-for-nlp-tasks' training wrapper (TF1):
# the graph holds a plain train op (run when there is no accumulation: no
# finding) and the accumulation ops, whose train op applies the raw sums;
# the accumulation-count placeholder is fed but never used.
import tensorflow as tf


class Trainer(object):
    def build(self, optimizer, loss, global_step):
        grads = optimizer.compute_gradients(loss)
        self.train_op = optimizer.apply_gradients(grads, global_step=global_step)
        self.accum_steps = tf.placeholder(tf.float32, [], name="accum_steps")
        self.sums = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                     for _, v in grads]
        self.zero_ops = [s.assign(tf.zeros_like(s)) for s in self.sums]
        self.accum_ops = [self.sums[i].assign_add(g) for i, (g, _) in enumerate(grads)]
        self.accum_train_op = optimizer.apply_gradients(  # <- GAC101
            [(self.sums[i], v) for i, (_, v) in enumerate(grads)], global_step=global_step)
