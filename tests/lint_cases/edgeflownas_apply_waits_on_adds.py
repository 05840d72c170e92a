# Modelled on the EdgeFlowNAS strict-fairness supernet trainer (TF1 compat
# graph): accumulators take three sampled paths' gradients each step, and
# the apply op divides them by 3. The apply op is built under the control
# dependencies of the adding op, so its run, after the loop that runs the
# adding op once per path, adds the first path's batch a fourth time: four
# micro-batches in a cycle divided by three (GAC109). Each path's gradients
# are also clipped before they are added (GAC106).
import tensorflow as tf


def build_graph(loss, lr_ph):
    optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate=lr_ph)
    grads_and_vars = optimizer.compute_gradients(loss)
    grads = [g for g, _ in grads_and_vars if g is not None]
    variables = [v for g, v in grads_and_vars if g is not None]
    clipped, norm = tf.clip_by_global_norm(grads, 5.0)  # <- GAC106
    accum_vars, zero_ops, add_ops = [], [], []
    for idx, (grad, var) in enumerate(zip(clipped, variables)):
        accum = tf.compat.v1.get_variable("strict_accum_%d" % idx, shape=var.shape,
                                          initializer=tf.zeros_initializer(), trainable=False)
        accum_vars.append(accum)
        zero_ops.append(tf.compat.v1.assign(accum, tf.zeros_like(accum)))
        add_ops.append(tf.compat.v1.assign_add(accum, grad))
    with tf.control_dependencies(add_ops):
        accum_op = tf.no_op(name="strict_accum_done")
    mean = [a / 3.0 for a in accum_vars]
    with tf.control_dependencies([accum_op]):
        apply_op = optimizer.apply_gradients(list(zip(mean, variables)))  # <- GAC109
    return {"zero_ops": zero_ops, "accum_op": accum_op, "apply_op": apply_op, "loss": loss}


def train(sess, graph, provider, sample_cycle, steps, feed):
    for step in range(steps):
        codes = sample_cycle()
        batch = provider.next_batch()
        sess.run(graph["zero_ops"])
        for code in codes:
            sess.run(graph["accum_op"], feed_dict=feed(batch, code))
        loss, _ = sess.run([graph["loss"], graph["apply_op"]], feed_dict=feed(batch, codes[0]))
