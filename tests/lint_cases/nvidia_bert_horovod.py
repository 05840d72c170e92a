# Modelled on NVIDIA DeepLearningExamples' BERT optimization.py (TF1 +
# Horovod): without allreduce_post_accumulation the optimizer is Horovod's
# DistributedOptimizer, so every micro-batch's compute_gradients all-reduces
# (said at the wrap, where the fix goes);
# each micro-batch is clipped before it is added.
import horovod.tensorflow as hvd
import tensorflow as tf


def create_optimizer(loss, init_lr, num_accumulation_steps):
    global_step = tf.compat.v1.train.get_or_create_global_step()
    optimizer = tf.compat.v1.train.AdamOptimizer(init_lr)
    optimizer = hvd.DistributedOptimizer(optimizer)  # <- GAC104
    tvars = tf.compat.v1.trainable_variables()
    grads_and_vars = optimizer.compute_gradients(loss * 1.0 / num_accumulation_steps, tvars)
    local_step = tf.Variable(0, trainable=False, dtype=tf.int32)
    accum_vars = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                  for v in tvars]
    reset_step = tf.cast(tf.math.equal(local_step % num_accumulation_steps, 0), dtype=tf.bool)
    local_step = tf.cond(reset_step, lambda: local_step.assign(tf.ones_like(local_step)),
                         lambda: local_step.assign_add(1))
    grads, tvars = list(zip(*grads_and_vars))
    (clipped_grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)  # <- GAC106
    accum_vars = tf.cond(reset_step,
                         lambda: [accum_vars[i].assign(g) for i, g in enumerate(clipped_grads)],
                         lambda: [accum_vars[i].assign_add(g) for i, g in enumerate(clipped_grads)])

    def update(accum_vars):
        return optimizer.apply_gradients(list(zip(accum_vars, tvars)), global_step=global_step)

    update_step = tf.math.equal(local_step % num_accumulation_steps, 0)
    return tf.cond(update_step, lambda: update(accum_vars), tf.no_op)
