# Modelled on a TF1 OpenPose trainer's --virtual_batch option (public,
# repository unknown): `if args.virtual_batch < 2` builds the plain
# minimize, which advances global_step itself; the `else` builds the
# accumulation and its own increment of global_step, run once beside
# each apply. The `if` picks a path, it is no cycle's test: the step is
# counted once per apply on both paths. Correct: no finding.
import tensorflow as tf


def build(args, optimizer, total_loss, variables):
    global_step = tf.Variable(0, trainable=False)
    virtual_batch_loss = total_loss / (args.batchsize * args.virtual_batch)
    if args.virtual_batch < 2:
        train_op = optimizer.minimize(total_loss, global_step, var_list=variables)
        return train_op, None, None, None, global_step
    else:
        accum_vars = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                      for v in variables]
        zero_ops = [a.assign(tf.zeros_like(a)) for a in accum_vars]
        gvs = optimizer.compute_gradients(virtual_batch_loss, var_list=variables)
        accum_ops = [accum_vars[i].assign_add(gv[0]) for i, gv in enumerate(gvs)]
        train_step = optimizer.apply_gradients([(accum_vars[i], gv[1]) for i, gv in enumerate(gvs)])
        inc_gs_num = tf.assign(global_step, global_step + 1)
        return train_step, zero_ops, accum_ops, inc_gs_num, global_step


def train(sess, args, ops, max_iter):
    train_step, zero_ops, accum_ops, inc_gs_num, global_step = ops
    while sess.run(global_step) < max_iter:
        sess.run(zero_ops)
        for _ in range(args.virtual_batch):
            sess.run(accum_ops)
        sess.run([train_step, inc_gs_num])
