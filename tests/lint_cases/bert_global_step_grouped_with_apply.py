# Modelled on joapolarbear/bert (optimization_accumulate.py), a BERT
# create_optimizer with accumulation ops: the global step's increment is
# grouped with the apply op, so it runs when the apply does, once per
# cycle (no GAC107); the sum is applied undivided and each micro-batch is
# clipped before it is added.
import tensorflow as tf


def create_optimizer(loss, learning_rate, global_step):
    optimizer = tf.train.AdamOptimizer(learning_rate)
    tvars = tf.trainable_variables()
    accum_vars = [tf.Variable(tf.zeros_like(tv.initialized_value()), trainable=False)
                  for tv in tvars]
    zero_ops = [tv.assign(tf.zeros_like(tv)) for tv in accum_vars]
    grads = tf.gradients(loss, tvars)
    (grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)  # <- GAC106
    accum_ops = [accum_vars[i].assign_add(g) for i, g in enumerate(grads)]
    train_op = optimizer.apply_gradients(  # <- GAC101
        [(accum, tvar) for accum, tvar in zip(accum_vars, tvars)])
    new_global_step = global_step + 1
    train_op = tf.group(train_op, [global_step.assign(new_global_step)])
    return train_op, zero_ops, accum_ops
