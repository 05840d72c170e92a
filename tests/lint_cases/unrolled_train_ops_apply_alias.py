# Modelled on a loop-unrolled BERT pre-training train-op builder (Habana's
# port of BERT's optimization, public, repository unknown): one op that
# adds a micro-batch, one that adds the last and applies. Each clips its
# micro-batch before adding it (the gradients reach the clip through
# triples unzipped by ``zip(*...)``), and the apply is called through a
# name bound to the optimizer's ``apply_gradients``.
import tensorflow as tf


def _sums(variables):
    return [tf.compat.v1.get_variable(v.name.split(":")[0] + "/sum", shape=v.shape,
                                      trainable=False) for v in variables]


def add_op(optimizer, loss):
    variables = tf.compat.v1.trainable_variables()
    pairs = optimizer.compute_gradients(loss, variables)
    sums = _sums(variables)
    triples = [(pair[0], pair[1], sums[i]) for i, pair in enumerate(pairs) if pair[0] is not None]
    grads, variables, sums = list(zip(*triples))
    clipped, _ = tf.clip_by_global_norm(grads, 1.0)  # <- GAC106
    sums = [sums[i].assign_add(tf.cast(g, sums[i].dtype)) for i, g in enumerate(clipped)]
    return tf.group(*sums)


def last_op(optimizer, loss, global_step, steps, reduce_after):
    variables = tf.compat.v1.trainable_variables()
    pairs = optimizer.compute_gradients(loss, variables)
    sums = _sums(variables)
    clipped, _ = tf.clip_by_global_norm([g for g, _ in pairs], 1.0)  # <- GAC106
    sums = [s.assign_add(g) for s, g in zip(sums, clipped)]
    if reduce_after:
        sums = [tf.compat.v1.Print(s, [s]) for s in sums]
        apply_fn = optimizer.apply_gradients
    else:
        apply_fn = optimizer.apply_gradients
    with tf.control_dependencies(sums):
        return apply_fn(list(zip(sums, variables)), global_step=global_step)  # <- GAC101
