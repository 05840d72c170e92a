# Modelled on a TF-slim style create_accum_train_op (public, repository
# unknown): the count of micro-batches is advanced by an op that only the
# accumulation ops wait for, and the tf.cond that decides the apply reads
# the count outside those control dependencies: in a TF1 graph it may
# read 0 at the first micro-batch and apply after one. The second builder
# puts the test after the increment and is right.
import tensorflow as tf


def create_accum_train_op(loss, optimizer, every):
    global_step = tf.compat.v1.train.get_or_create_global_step()
    count = tf.compat.v1.get_variable("count", initializer=tf.constant(0), trainable=False)
    update_count = tf.compat.v1.assign_add(count, 1)
    tvars = tf.compat.v1.trainable_variables()
    grads = optimizer.compute_gradients(loss, tvars)
    sums = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False) for v in tvars]
    with tf.control_dependencies([update_count]):
        adds = [s.assign_add(g / every) for s, (g, v) in zip(sums, grads)]

    def apply_sums():
        with tf.control_dependencies(adds):
            applied = optimizer.apply_gradients(zip(sums, tvars), global_step=global_step)
        with tf.control_dependencies([applied]):
            return tf.group(*[s.assign(tf.zeros_like(s)) for s in sums])

    return tf.cond(tf.equal(count % every, 0), apply_sums, lambda: tf.group(*adds))  # <- GAC109


def create_ordered_train_op(loss, optimizer, every):
    global_step = tf.compat.v1.train.get_or_create_global_step()
    seen = tf.compat.v1.get_variable("seen", initializer=tf.constant(0), trainable=False)
    update_seen = tf.compat.v1.assign_add(seen, 1)
    tvars = tf.compat.v1.trainable_variables()
    grads = optimizer.compute_gradients(loss, tvars)
    sums = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False) for v in tvars]
    with tf.control_dependencies([update_seen]):
        adds = [s.assign_add(g / every) for s, (g, v) in zip(sums, grads)]

        def apply_sums():
            with tf.control_dependencies(adds):
                applied = optimizer.apply_gradients(zip(sums, tvars), global_step=global_step)
            with tf.control_dependencies([applied]):
                return tf.group(*[s.assign(tf.zeros_like(s)) for s in sums])

        return tf.cond(tf.equal(seen % every, 0), apply_sums, lambda: tf.group(*adds))
