# Modelled on yannikbenz/zeroe's run_tc.py (TF2, tf.distribute, the HF
# accumulator): each epoch restarts its step count at 1, the batch loop
# runs the accumulating step and hands apply_gradients to
# strategy.experimental_run_v2 when step % N == 0; nothing applies or
# resets the accumulator after the loop, so each epoch's last partial
# cycle is carried into the next (GAC110).
import tensorflow as tf


def train(strategy, model, optimizer, make_accumulator, dataset, epochs, n_micro):
    with strategy.scope():
        accumulator = make_accumulator()

    def apply_gradients():
        grads = [g / tf.cast(n_micro, g.dtype) for g in accumulator.gradients]
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        accumulator.reset()

    @tf.function
    def train_step(x, y):
        def step_fn(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model.loss(y, model(x, training=True)))
            accumulator(tape.gradient(loss, model.trainable_variables))
            return loss
        return strategy.experimental_run_v2(step_fn, args=(x, y))

    for epoch in range(epochs):  # <- GAC110
        step = 1
        for x, y in dataset:
            train_step(x, y)
            if step % n_micro == 0:
                strategy.experimental_run_v2(apply_gradients)
            step += 1
