# Modelled on a TF2 image-captioning trainer (ViT encoder, T5 decoder;
# public, repo unknown): the sums are picked per parameter group, divided
# by a lambda only when accumulation is on (with one micro-batch there is
# nothing to divide), and applied; the loop flushes a partial cycle at
# the end of each epoch (divided by N too: a weighting lint does not
# judge). No finding.
import tensorflow as tf


def train(cfg, model, loss_fn, dataset, opt, decay_vars, other_vars, epochs):
    variables = model.trainable_variables
    accum_vars = [tf.Variable(tf.zeros_like(v), trainable=False) for v in variables]

    @tf.function
    def accumulate(images, captions):
        with tf.GradientTape() as tape:
            loss = loss_fn(captions, model(images))
        grads = tape.gradient(loss, variables)
        for a, g in zip(accum_vars, grads):
            a.assign_add(g)

    def pick(group):
        wanted = set(v.ref() for v in group)
        gs, vs = [], []
        for g, v in zip(accum_vars, variables):
            if v.ref() in wanted:
                gs.append(g)
                vs.append(v)
        return gs, vs

    def apply_accumulated():
        gd, vd = pick(decay_vars)
        gn, vn = pick(other_vars)
        if cfg.acc_steps > 1:
            scale = lambda grads: [g / tf.cast(cfg.acc_steps, g.dtype) for g in grads]
            gd, gn = scale(gd), scale(gn)
        opt.apply_gradients(list(zip(gd, vd)) + list(zip(gn, vn)))
        for a in accum_vars:
            a.assign(tf.zeros_like(a))

    for _ in range(epochs):
        micro = 0
        for images, captions in dataset:
            accumulate(images, captions)
            micro += 1
            if micro % cfg.acc_steps == 0:
                apply_accumulated()
        if micro % cfg.acc_steps:
            apply_accumulated()
