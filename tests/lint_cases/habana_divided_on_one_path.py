# Modelled on HabanaAI's MLPerf BERT optimizer (TF1 graph): the loss is not
# divided by N (that line is commented out), and the accumulated sums are
# divided only on the path that all-reduces them after accumulation
# (`if allreduce_post_accumulation:`); on the default path the same apply
# gets the raw sum (GAC101).
import horovod.tensorflow as hvd
import tensorflow as tf


def create_optimizer(loss, lr, num_accumulation_steps, allreduce_post_accumulation=False):
    global_step = tf.compat.v1.train.get_or_create_global_step()
    optimizer = tf.compat.v1.train.AdamOptimizer(lr)
    tvars = tf.compat.v1.trainable_variables()
    # grads_and_vars = optimizer.compute_gradients(loss / num_accumulation_steps, tvars)
    grads_and_vars = optimizer.compute_gradients(loss, tvars)
    accum_vars = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                  for v in tvars]
    local_step = tf.Variable(0, trainable=False, dtype=tf.int32)
    first = tf.math.equal(local_step % num_accumulation_steps, 0)
    added = tf.cond(first,
                    lambda: [a.assign(g) for a, (g, _) in zip(accum_vars, grads_and_vars)],
                    lambda: [a.assign_add(g) for a, (g, _) in zip(accum_vars, grads_and_vars)])
    with tf.control_dependencies(added):
        local_step = local_step.assign_add(1)

    def update(accum_vars):
        if allreduce_post_accumulation:
            accum_vars = [hvd.allreduce(a * 1.0 / num_accumulation_steps, op=hvd.Sum)
                          for a in accum_vars]
        return optimizer.apply_gradients(  # <- GAC101
            list(zip(accum_vars, tvars)), global_step=global_step)

    apply_now = tf.math.equal(local_step % num_accumulation_steps, 0)
    return tf.cond(apply_now, lambda: update(accum_vars), tf.no_op)
