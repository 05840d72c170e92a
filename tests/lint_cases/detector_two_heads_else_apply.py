# Modelled on an anchor-free detector's custom training loop (TF2,
# public, repo unknown): the gradients of each batch are added to
# variables while a Python counter is below N; otherwise the sums are
# unscaled by the mixed-precision optimizer, divided by their counts,
# clipped, split between the backbone's optimizer and the heads' and
# applied. The batch of the step that applies is never added (each cycle
# reads N + 1 batches and uses N), and the counter and sums outlive the
# epoch, so its last partial cycle is carried into the next one.
import tensorflow as tf


def train(model, dataset, backbone_opt, heads_opt, backbone_vars, epochs, acc_num=4):
    variables = model.trainable_variables
    sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in variables]
    counts = [tf.Variable(0.0, trainable=False) for _ in variables]
    counter = 0
    for epoch in range(epochs):  # <- GAC110
        for images, boxes in dataset:
            with tf.GradientTape() as tape:
                loss = backbone_opt.get_scaled_loss(model.loss_fn(model(images), boxes))
            grads = tape.gradient(loss, variables)
            if counter < acc_num:  # <- GAC109
                for i, g in enumerate(grads):
                    sums[i].assign_add(g)
                    counts[i].assign_add(1.0)
                counter += 1
            else:
                unscaled = backbone_opt.get_unscaled_gradients(sums)
                means = [tf.math.divide_no_nan(s, c) for s, c in zip(unscaled, counts)]
                clipped = [tf.clip_by_norm(m, 10.0) for m in means]
                backbone, heads = [], []
                for g, v in zip(clipped, variables):
                    if v.ref() in backbone_vars:
                        backbone.append((g, v))
                    else:
                        heads.append((g, v))
                backbone_opt.apply_gradients(backbone)
                heads_opt.apply_gradients(heads)
                for s, c in zip(sums, counts):
                    s.assign(tf.zeros_like(s))
                    c.assign(0.0)
                counter = 0
