# Modelled on PeterBul/albert-hate's estimator helper (TF1, no distribution
# strategy): the sums are variables made with aggregation=MEAN, which only
# matters under a strategy, so nothing reduces per micro-step here; the
# apply's test `global_step % N == 0` is true at step 0, and global_step
# (which the estimator's schedules read) advances every micro-step.
import tensorflow.compat.v1 as tf


def accumulate(grads, variables, optimizer, n_micro, global_step):
    sums = [tf.get_variable("sum_%d" % i, shape=v.shape, initializer=tf.zeros_initializer,
                            trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES],
                            aggregation=tf.VariableAggregation.MEAN)
            for i, v in enumerate(variables)]
    adds = [s.assign_add(g) for s, g in zip(sums, grads)]

    def apply_sums():
        means = [s.assign(s / n_micro) for s in sums]
        with tf.control_dependencies(means):
            return optimizer.apply_gradients(zip(sums, variables))

    with tf.control_dependencies(adds):
        applied = tf.cond(tf.equal(global_step % n_micro, 0), apply_sums, tf.no_op)  # <- GAC109
    with tf.control_dependencies([applied]):
        reset = tf.group([s.assign(tf.zeros_like(s)) for s in sums])
    return tf.group(applied, reset, global_step.assign(global_step + 1))  # <- GAC107
