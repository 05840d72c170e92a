# Modelled on OpenNMT-tf v1's delayed update (TF1): each micro-batch is
# clipped by global norm before it is accumulated; the accumulating
# function's write is a parameter defaulting to tf.assign_add; the pairs of
# sums are appended to a list and applied through a local helper, undivided.
import tensorflow as tf


def optimize(loss, optimizer, accum_count, clip, global_step):
    pairs = optimizer.compute_gradients(loss)
    pairs = clip_by_global_norm(pairs, clip)  # <- GAC106
    return delayed_update(optimizer, pairs, global_step, accum_count)


def clip_by_global_norm(pairs, clip):
    grads, variables = zip(*pairs)
    clipped, _ = tf.clip_by_global_norm(grads, clip)
    return list(zip(clipped, variables))


def delayed_update(optimizer, pairs, global_step, accum_count):
    def apply_pairs(grads_and_vars):
        return optimizer.apply_gradients(grads_and_vars, global_step=global_step)  # <- GAC101

    count = tf.Variable(0, trainable=False, dtype=tf.int64)
    sums, summed_pairs = [], []
    for grad, var in pairs:
        total = tf.Variable(tf.zeros(var.shape, dtype=grad.dtype), trainable=False)
        sums.append(total)
        summed_pairs.append((total, var))

    def step(write=tf.assign_add, apply=False):
        ops = [count.assign_add(1)]
        for total, (grad, _) in zip(sums, pairs):
            ops.append(write(total, grad))
        with tf.control_dependencies(ops):
            if apply:
                return apply_pairs(summed_pairs)
            return tf.no_op()

    return tf.cond(tf.equal((count + 1) % accum_count, 0),
                   lambda: step(apply=True),
                   lambda: tf.cond(tf.equal(count % accum_count, 0),
                                   lambda: step(write=tf.assign), step))
