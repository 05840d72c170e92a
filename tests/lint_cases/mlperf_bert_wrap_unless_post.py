# Modelled on the MLPerf BERT optimization.py of mlcommons' training
# results (and HabanaAI's copy): unless allreduce_post_accumulation is set,
# the optimizer is Horovod's DistributedOptimizer on the accumulating path
# too, so every micro-batch all-reduces (GAC104, said at the wrap, where the
# fix goes). The compute_gradients in the `else` of `if steps > 1` is the
# plain step, which may all-reduce: no second finding there.
import horovod.tensorflow as hvd
import tensorflow as tf


def create_optimizer(loss, lr, num_accumulation_steps=1, allreduce_post_accumulation=False):
    global_step = tf.compat.v1.train.get_or_create_global_step()
    optimizer = tf.compat.v1.train.AdamOptimizer(lr)
    if num_accumulation_steps == 1 or not allreduce_post_accumulation:
        optimizer = hvd.DistributedOptimizer(optimizer, sparse_as_dense=True)  # <- GAC104
    tvars = tf.compat.v1.trainable_variables()
    if num_accumulation_steps > 1:
        grads_and_vars = optimizer.compute_gradients(loss / num_accumulation_steps, tvars)
        counter = tf.Variable(0, trainable=False, dtype=tf.int32)
        sums = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                for v in tvars]
        added = []
        for i, (g, _) in enumerate(grads_and_vars):
            added.append(sums[i].assign_add(g))
        with tf.control_dependencies(added):
            local_step = counter.assign_add(1)
        apply_now = tf.math.equal(local_step % num_accumulation_steps, 0)
        return tf.cond(apply_now,
                       lambda: optimizer.apply_gradients(zip(sums, tvars), global_step=global_step),
                       tf.no_op)
    else:
        grads_and_vars = optimizer.compute_gradients(loss, tvars)
        return optimizer.apply_gradients(grads_and_vars, global_step=global_step)
