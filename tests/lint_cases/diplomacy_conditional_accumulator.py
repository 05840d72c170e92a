# Modelled on diplomacy/research's AvgGradOptimizer (TF1 graph): each
# gradient goes into a tf ConditionalAccumulator, which averages what it
# receives; the variables are collected with `var_list += [var]` in the
# same loop. Extending a list is no sum of gradients, and the averaged
# gradients are applied once: nothing to report.
import tensorflow as tf


class AvgGradOptimizer(object):
    def __init__(self, optimizer, num_required):
        self._optimizer = optimizer
        self._num_required = num_required
        self._local_step = tf.Variable(0, trainable=False, dtype=tf.int64)

    def apply_gradients(self, grads_and_vars, global_step=None):
        train_ops, var_list, averaged = [], [], []
        for grad, var in grads_and_vars:
            if grad is None:
                continue
            var_list += [var]
            accumulator = tf.ConditionalAccumulator(grad.dtype, shape=var.get_shape())
            train_ops += [accumulator.apply_grad(grad, local_step=self._local_step)]
            averaged += [accumulator.take_grad(self._num_required)]
        self.update_op = self._optimizer.apply_gradients(zip(averaged, var_list), global_step)
        return tf.group(*train_ops)
