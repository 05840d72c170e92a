# Modelled on a TF1 optimizer-class factory that accumulates (it imports
# finetune.errors; public, repository not confirmed): the apply of the
# parent is called with ``*args, **kwargs``, which hand it no global_step
# one by one, and only the branch that skips the apply advances the
# global_step the cycle is decided on.
import tensorflow as tf


def accumulating(optimizer_class, steps):
    class Accumulating(optimizer_class):
        def apply_gradients(self, grads_and_vars, *args, **kwargs):
            sums, pairs, adds = [], [], []
            for g, v in grads_and_vars:
                s = tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                adds.append(s.assign_add(g / steps))
                sums.append(s)
                pairs.append((s, v))
            global_step = tf.compat.v1.train.get_or_create_global_step()
            with tf.control_dependencies(adds):
                def apply_sums():
                    applied = super(Accumulating, self).apply_gradients(pairs, *args, **kwargs)
                    with tf.control_dependencies([applied]):
                        return tf.group(*[s.assign(tf.zeros_like(s)) for s in sums])

                return tf.cond(tf.equal(global_step % steps, steps - 1), apply_sums,
                               lambda: tf.group(global_step.assign_add(1)))  # <- GAC109

    return Accumulating
