# Modelled on a GPT-2 estimator model_fn with an accumulating optimizer
# wrapper (TF1, public, repo unknown): the apply op is built first and the
# tf.cond only returns it (`lambda: opt_apply`), so the apply runs on every
# micro-step, whichever way the test goes. The twin builds each op inside
# its branch function: clean.
import tensorflow as tf


def model_fn_prebuilt(opt, loss, accumulate_gradients=4):
    global_step = tf.compat.v1.train.get_or_create_global_step()
    opt_compute = opt.compute_gradients(loss)
    opt_apply = opt.apply_gradients()
    accu = tf.equal(tf.math.floormod(global_step, accumulate_gradients), 0)
    train_op = tf.cond(accu, true_fn=lambda: opt_apply, false_fn=lambda: opt_compute)  # <- GAC102
    return train_op


def model_fn_built_inside(opt, loss, accumulate_gradients=4):
    global_step = tf.compat.v1.train.get_or_create_global_step()
    accu = tf.equal(tf.math.floormod(global_step, accumulate_gradients), 0)
    train_op = tf.cond(accu, true_fn=lambda: opt.apply_gradients(),
                       false_fn=lambda: opt.compute_gradients(loss))
    return train_op
