# Modelled on PeterBul/albert-hate's create_optimizer (TF1): the gradients
# are clipped by global norm, then handed to an accumulation helper from
# another module, which sums them over the micro-batches.
import tensorflow.compat.v1 as tf

from accumulation import use_gradient_accumulation


def create_optimizer(loss, optimizer, n_micro, global_step, do_update):
    tvars = tf.trainable_variables()
    grads = tf.gradients(loss, tvars)
    (grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)  # <- GAC106
    return use_gradient_accumulation(grads, tvars, optimizer, n_micro, global_step, do_update)
