# Modelled on Ivan0131/SemMatch's AdamAccumulateWeightDecayOptimizer (a TF1
# tf.train.Optimizer): apply_gradients masks its updates with
# flag = global_step % accum_iters == 0, read before this step's increment,
# so the very first micro-batch already applies (g / N alone) and the first
# cycle is one micro-batch long (GAC109).
import tensorflow as tf


class AdamAccumulate(tf.train.Optimizer):
    def __init__(self, learning_rate, accum_iters=4, name="AdamAccumulate"):
        super(AdamAccumulate, self).__init__(False, name)
        self.learning_rate = learning_rate
        self.accum_iters = accum_iters

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        if global_step is None:
            global_step = tf.train.get_or_create_global_step()
        sums = [tf.get_variable(p.op.name + "/acc", shape=p.shape.as_list(), trainable=False,
                                initializer=tf.zeros_initializer()) for _, p in grads_and_vars]
        flag = tf.cast(tf.equal(global_step % self.accum_iters, 0), tf.float32)  # <- GAC109
        assignments = []
        for (grad, param), acc in zip(grads_and_vars, sums):
            mean = (acc + grad) / self.accum_iters
            assignments.append(param.assign(param - flag * self.learning_rate * mean))
            assignments.append(acc.assign((1 - flag) * (acc + grad)))
        return tf.group(*assignments, name=name)
