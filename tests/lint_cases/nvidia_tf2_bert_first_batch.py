# Modelled on the TF2 BERT training utilities of a vendor example repository:
# gradients go into a helper accumulator object (`add_gradients`), a closure
# divides its sums by N and applies them, and the loops that call the
# closure also call it at the very first micro-batch (`i == 0 or ...`): one
# update from a single micro-batch, then cycles of N.
import tensorflow as tf


def make_loops(model, optimizer, loss_fn, strategy, helper_accumulator):
    def forward(inputs):
        x, y = inputs
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        helper_accumulator.add_gradients(tape.gradient(loss, model.trainable_variables))

    def apply_step(n):
        sums = helper_accumulator.gradients
        sums = [g / tf.cast(n, g.dtype) for g in sums]
        optimizer.apply_gradients(zip(sums, model.trainable_variables))
        helper_accumulator.reset()

    @tf.function
    def train_steps(iterator, steps, n):
        for i in tf.range(steps * n):
            forward(next(iterator))
            if i == 0 or (i + 1) % n == 0:  # <- GAC109
                apply_step(n)

    @tf.function
    def train_steps_replicated(iterator, steps, n):
        for i in tf.range(steps * n):
            strategy.run(forward, args=(next(iterator),))
            if i == 0 or (i + 1) % n == 0:  # <- GAC109
                strategy.run(apply_step, args=(n,))

    return train_steps, train_steps_replicated
