# Modelled on palframe's TF1 optimizer builder (public): the graph's step,
# made by create_global_step under the name batch_id, gates the cycle with
# tf.mod(batch_id, N) == 0 and is advanced on both sides of the tf.cond:
# by the apply's global_step on one, by an assign on the other. It counts
# micro-steps (GAC107), and reads 0 at the first run, so the first apply
# holds one micro-batch (GAC109).
import tensorflow as tf


def construct_optimizer(loss, virtual_batch_size_ratio=4, gradient_norm=10.0):
    batch_id = tf.train.create_global_step()
    opt = tf.train.AdamOptimizer(learning_rate=0.001)
    tvars = tf.trainable_variables()
    accum_g = [tf.Variable(tf.zeros_like(tv), trainable=False) for tv in tvars]
    pairs = opt.compute_gradients(loss)
    accum_ops = [accum_g[i].assign_add(g / virtual_batch_size_ratio)
                 for i, (g, var) in enumerate(pairs) if g is not None]

    def f_apply():
        clipped, _ = tf.clip_by_global_norm(accum_g, gradient_norm)
        train_op = opt.apply_gradients([(clipped[i], var) for i, (_, var) in enumerate(pairs)],
                                       global_step=batch_id)
        with tf.control_dependencies([train_op]):
            return tf.group([a.assign(tf.zeros_like(a)) for a in accum_g])

    def f_accumulate():
        return tf.group(batch_id.assign(batch_id + 1))  # <- GAC107

    with tf.control_dependencies(accum_ops):
        return tf.cond(tf.equal(tf.mod(batch_id, virtual_batch_size_ratio), 0),  # <- GAC109
                       f_apply, f_accumulate)
