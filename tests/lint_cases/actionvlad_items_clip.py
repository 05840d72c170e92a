# Modelled on rohitgirdhar/ActionVLAD's train_image_classifier.py (a TF-slim
# trainer with iter_size): the clones' gradients are clipped by norm, then
# added into one reference variable per weight, walked as
# `for name, ref in refs.items()`, and the apply reads the references divided
# by iter_size. The division is right; the clip acts on each micro-batch's
# gradients, not on their mean (GAC106).
import numpy as np
import tensorflow as tf

slim = tf.contrib.slim
FLAGS = tf.app.flags.FLAGS


def train_ops(optimizer, clones_gradients, global_step):
    if FLAGS.clip_gradients > 0:
        clones_gradients = slim.learning.clip_gradient_norms(  # <- GAC106
            clones_gradients, FLAGS.clip_gradients)
    to_grad = dict((var.name, grad) for grad, var in clones_gradients)
    refs = {}
    for grad, var in clones_gradients:
        refs[var.name] = slim.local_variable(np.zeros(grad.get_shape(), np.float32),
                                             name=var.name[:-2] + "_ref")
    assign_first = tf.group(*[ref.assign(to_grad[name]) for name, ref in refs.items()])
    accumulate = tf.group(*[ref.assign_add(to_grad[name]) for name, ref in refs.items()])
    with tf.control_dependencies([accumulate]):
        mean = [(refs[var.name] / float(FLAGS.iter_size), var) for _, var in clones_gradients]
        apply_op = optimizer.apply_gradients(mean, global_step=global_step)
    ops = {}
    for i in range(FLAGS.iter_size):
        ops[i] = assign_first if i == 0 else (accumulate if i < FLAGS.iter_size - 1 else apply_op)
    return ops
