# Modelled on a TF1 helper that builds the accumulation ops (public, repo
# unknown): its loops walk `enumerate(grad)` with a loop variable named
# `grad` too (and a comprehension does the same with `gradients`), so a
# name is bound by reading itself. Lint once recursed without end there;
# the sums are divided as they are added and clipped after, as the big
# batch clips its mean. Clean.
import tensorflow as tf


def exclude_none(grad, var):
    gradients, variables = [], []
    for i, grad in enumerate(grad):
        if grad is None:
            continue
        gradients.append(grad)
        variables.append(var[i])
    return gradients, variables


def make_optimizer(lr, loss, num_batches, var_list=None):
    opt = tf.train.AdamOptimizer(lr, epsilon=1e-4)
    if var_list is None:
        gradients, variables = zip(*opt.compute_gradients(loss))
    else:
        gradients, variables = zip(*opt.compute_gradients(loss, var_list=var_list))
    gradients, variables = exclude_none(gradients, variables)
    accum_grads = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                   for v in variables]
    backward_op = [accum_grads[i].assign_add(gradients / num_batches)
                   for i, gradients in enumerate(gradients)]
    clipped, _ = tf.clip_by_global_norm(accum_grads, 5.0)
    step_op = opt.apply_gradients([(clipped[i], v) for i, v in enumerate(variables)])
    zero_ops = [a.assign(tf.zeros_like(a)) for a in accum_grads]
    return backward_op, zero_ops, step_op
