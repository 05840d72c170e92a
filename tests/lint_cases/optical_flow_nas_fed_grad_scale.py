# Modelled on an optical-flow NAS retraining script (tf.compat.v1 session):
# each logical batch is cut into micro slices; each slice's loss is
# multiplied by a fed scale, slice size over logical batch size, before
# compute_gradients; the gradients are added into variables, clipped once
# and applied once per logical batch. The loop also sums the slices' fetched
# losses as Python floats for its log, and counts logical batches in a
# Python global_step. Correct: no finding.
import tensorflow as tf


def build(loss_tensor, lr_ph, grad_scale_ph, clip):
    optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate=lr_ph)
    pairs = optimizer.compute_gradients(loss_tensor * grad_scale_ph)
    pairs = [(g, v) for g, v in pairs if g is not None]
    variables = [v for _, v in pairs]
    accum_vars = [tf.Variable(tf.zeros(v.shape, v.dtype.base_dtype), trainable=False)
                  for v in variables]
    zero_op = tf.group(*[a.assign(tf.zeros_like(a)) for a in accum_vars])
    accum_op = tf.group(*[a.assign_add(g) for a, (g, _) in zip(accum_vars, pairs)])
    clipped, norm = tf.clip_by_global_norm(list(accum_vars), clip_norm=clip)
    train_op = optimizer.apply_gradients(list(zip(clipped, variables)))
    return {"zero": zero_op, "accum": accum_op, "train": train_op, "loss": loss_tensor,
            "norm": norm}


def train(sess, graph, batches, input_ph, lr_ph, grad_scale_ph, micro, lr_at):
    global_step = 0
    for logical in batches:
        sess.run(graph["zero"])
        step_loss, step_norm = 0.0, 0.0
        for start in range(0, logical.shape[0], micro):
            part = logical[start:start + micro]
            grad_scale = float(part.shape[0]) / float(logical.shape[0])
            result = sess.run({"accum": graph["accum"], "loss": graph["loss"],
                               "norm": graph["norm"]},
                              feed_dict={input_ph: part, grad_scale_ph: grad_scale,
                                         lr_ph: lr_at(global_step)})
            step_loss += float(result["loss"]) * grad_scale
            step_norm += float(result["norm"]) * grad_scale
        sess.run(graph["train"], feed_dict={lr_ph: lr_at(global_step)})
        global_step += 1
    return step_loss, step_norm


def main(sess, model, batches, micro, lr_at):
    input_ph = tf.compat.v1.placeholder(tf.float32, [None, 384, 512, 6], name="Input")
    lr_ph = tf.compat.v1.placeholder(tf.float32, (), name="LearningRate")
    grad_scale_ph = tf.compat.v1.placeholder(tf.float32, shape=(), name="GradScale")
    graph = build(model(input_ph), lr_ph, grad_scale_ph=grad_scale_ph, clip=5.0)
    sess.run(tf.compat.v1.global_variables_initializer())
    return train(sess, graph, batches, input_ph, lr_ph, grad_scale_ph, micro, lr_at)
