# Modelled on p0vidl0/gpt-2-training (accumulate.py), the AccumulatingOptimizer
# many GPT-2 fine-tuning scripts carry: its methods call their instance `own`,
# count the micro-batches for the loss they report, and apply the sum.
import tensorflow as tf


class AccumulatingOptimizer(object):
    def __init__(own, opt, var_list):
        own.opt = opt
        own.var_list = var_list
        own.accum_vars = dict((v, tf.Variable(tf.zeros_like(v.initialized_value()),
                                              trainable=False)) for v in var_list)
        own.total_loss = tf.Variable(0.0)
        own.count_loss = tf.Variable(0.0)

    def compute_gradients(own, loss):
        grads = own.opt.compute_gradients(loss, own.var_list)
        updates = [own.accum_vars[v].assign_add(g) for (g, v) in grads]
        updates.append(own.total_loss.assign_add(loss))
        updates.append(own.count_loss.assign_add(1.0))
        with tf.control_dependencies(updates):
            return tf.no_op()

    def apply_gradients(own):
        grads = [(g, v) for (v, g) in own.accum_vars.items()]
        with tf.control_dependencies([own.opt.apply_gradients(grads)]):  # <- GAC101
            return own.total_loss / own.count_loss
