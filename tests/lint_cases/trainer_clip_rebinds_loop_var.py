# Modelled on a TF2 trainer script (tf.function step, public, repo
# unknown): in the loop over the micro-batch's gradients, each one is
# clipped by its norm when grad_clip is set, and cast to the sum's dtype,
# both by rebinding the loop variable, before it is added. The big batch
# would clip the mean of the N gradients once.
import tensorflow as tf


def make_step(model, loss_fn, optimizer, accum_vars, counter, steps, grad_clip=None):
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True)) / steps
        grads = tape.gradient(loss, model.trainable_variables)
        for i, g in enumerate(grads):
            if g is None:
                continue
            if grad_clip is not None:
                g = tf.clip_by_norm(g, float(grad_clip))  # <- GAC106
            if g.dtype != accum_vars[i].dtype:
                g = tf.cast(g, accum_vars[i].dtype)
            accum_vars[i].assign_add(g)
        counter.assign_add(1)

        def apply_and_reset():
            optimizer.apply_gradients(zip(accum_vars, model.trainable_variables))
            for a in accum_vars:
                a.assign(tf.zeros_like(a))
            counter.assign(0)
            return tf.constant(True)

        return tf.cond(tf.equal(counter, steps), apply_and_reset, lambda: tf.constant(False))
    return step
