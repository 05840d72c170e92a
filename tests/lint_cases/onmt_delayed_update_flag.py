# Modelled on OpenNMT-tf v1's delayed_update (its optim module, public):
# one helper adds the micro-batch and applies only when its
# ``apply_gradients`` flag is true; a nested tf.cond calls it with the flag
# when the cycle ends, with ``accum_fn=tf.assign`` (no flag) when a cycle
# starts, and bare (no flag) otherwise. The ``global_step % N == 0`` test
# decides the restart, not an apply. The step count still moves on every
# micro-step: by hand where nothing applies, by the apply where it does.
import tensorflow as tf


def delayed_update(optimizer, grads_and_vars, global_step, accum_count):
    sums = [tf.Variable(tf.zeros_like(g), trainable=False) for g, _ in grads_and_vars]
    pairs = [(s / accum_count, v) for s, (_, v) in zip(sums, grads_and_vars)]

    def _accum_grads(accum_fn=tf.compat.v1.assign_add, apply_gradients=False):
        updates = [accum_fn(s, g) for s, (g, _) in zip(sums, grads_and_vars)]
        with tf.control_dependencies(updates):
            if apply_gradients:
                return optimizer.apply_gradients(pairs, global_step=global_step)
            else:
                with tf.control_dependencies([global_step.assign_add(1)]):  # <- GAC107
                    return tf.no_op()

    return tf.cond(
        tf.equal((global_step + 1) % accum_count, 0),
        true_fn=lambda: _accum_grads(apply_gradients=True),
        false_fn=lambda: tf.cond(
            tf.equal(global_step % accum_count, 0),
            true_fn=lambda: _accum_grads(accum_fn=tf.compat.v1.assign),
            false_fn=_accum_grads))
