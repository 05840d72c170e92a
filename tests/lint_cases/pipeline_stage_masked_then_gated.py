# Modelled on a pipeline-parallel trainer's micro-batch controller (TF2,
# Keras optimizer patched in place): its replacement `apply_gradients`
# adds each micro-batch's gradient, weighted by its size, into variables,
# hands zeros or the sums divided by the examples counted through a
# `tf.cond`, and then runs the optimizer's own apply only in the
# `tf.cond` branch taken at the batch's last micro-batch. The zeros reach
# no optimizer: correct.
import tensorflow as tf


def patch(optimizer, variables, micro_batches, micro_size, last_size):
    sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in variables]
    count = tf.Variable(0, trainable=False)
    original_apply = optimizer.apply_gradients

    def apply_in_micro_batches(grads_and_vars, name=None):
        grads_and_vars = list(grads_and_vars)
        for i in range(len(grads_and_vars)):
            grad, var = grads_and_vars[i]
            size = tf.cond(count < micro_batches - 1, lambda: micro_size, lambda: last_size)
            added = sums[i].assign_add(grad * tf.cast(size, grad.dtype))
            total = (micro_batches - 1) * micro_size + last_size
            ready = tf.cond(count < micro_batches - 1,
                            lambda: tf.zeros_like(var),
                            lambda: tf.divide(added, tf.cast(total, var.dtype)))
            grads_and_vars[i] = (ready, var)

        def apply_now():
            with tf.control_dependencies([original_apply(grads_and_vars, name)]):
                return tf.group(count.assign(0), *[s.assign(tf.zeros_like(s)) for s in sums])

        def keep_adding():
            return tf.group(count.assign_add(1))

        return tf.cond(count >= micro_batches - 1, apply_now, keep_adding)

    optimizer.apply_gradients = apply_in_micro_batches
