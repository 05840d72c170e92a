# Modelled on intel/ai-reference-models' BERT create_optimizer (TF1 graph,
# Horovod): the optimizer is wrapped in hvd.DistributedOptimizer only when
# accum_steps == 1, the path that does not accumulate; with accum_steps > 1
# the micro-batches' gradients are taken from the plain optimizer, summed
# locally, and all-reduced once, when the cycle applies. No GAC104.
import horovod.tensorflow as hvd
import tensorflow as tf


def create_optimizer(loss, learning_rate, accum_steps=1, use_horovod=False):
    global_step = tf.train.get_or_create_global_step()
    optimizer = tf.train.AdamOptimizer(learning_rate)
    if use_horovod and accum_steps == 1:
        optimizer = hvd.DistributedOptimizer(optimizer, sparse_as_dense=True)
    tvars = tf.trainable_variables()
    if accum_steps > 1:
        grads_and_vars = optimizer.compute_gradients(loss * 1.0 / accum_steps, tvars)
        accum_vars = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                      for v in tvars]
        current_step = tf.Variable(0, trainable=False, dtype=tf.int64)
        reset = tf.cast(tf.math.equal(current_step % accum_steps, 0), tf.bool)
        accumulate = tf.cond(
            reset,
            lambda: [a.assign(g) for a, (g, _) in zip(accum_vars, grads_and_vars)],
            lambda: [a.assign_add(g) for a, (g, _) in zip(accum_vars, grads_and_vars)])
        with tf.control_dependencies(accumulate):
            step = current_step.assign_add(1)

        def apply_sums():
            summed = [hvd.allreduce(a) if use_horovod else a for a in accum_vars]
            return optimizer.apply_gradients(zip(summed, tvars), global_step=global_step)

        with tf.control_dependencies([step]):
            return tf.cond(tf.math.equal(step % accum_steps, 0), apply_sums, tf.no_op)
    grads_and_vars = optimizer.compute_gradients(loss, tvars)
    return optimizer.apply_gradients(grads_and_vars, global_step=global_step)
