# Modelled on google-research/tapas' BERT-style optimization code: an
# accumulating optimizer wrapper (a class of the project) built around the
# optimizer, and the pretraining clip left in front of its apply: each
# micro-batch is clipped before the wrapper accumulates it.
import tensorflow as tf


def create_optimizer(loss, init_lr, gradient_accumulation_steps):
    global_step = tf.compat.v1.train.get_or_create_global_step()
    optimizer = tf.compat.v1.train.AdamOptimizer(init_lr)
    if gradient_accumulation_steps > 1:
        optimizer = GradientAccumulationOptimizer(optimizer, steps=gradient_accumulation_steps)
    tvars = tf.compat.v1.trainable_variables()
    grads = tf.gradients(loss, tvars)
    (grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)
    return optimizer.apply_gradients(zip(grads, tvars), global_step=global_step)  # <- GAC106
