# Modelled on caglanakpinar/qwen_customized_with_tiny_lora's SFT loop: the
# micro-step count and the sums live across epochs; the optimizer step is
# skipped with `continue` until the count reaches a multiple of N, and
# nothing is applied after an epoch's batches.
import tensorflow as tf


def train(model, optimizer, loss_fn, dataset, n_micro, n_epochs):
    variables = model.trainable_variables
    sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in variables]

    @tf.function
    def forward_backward(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True)) / n_micro
        for s, g in zip(sums, tape.gradient(loss, variables)):
            s.assign_add(g)
        return loss

    @tf.function
    def optimizer_step():
        optimizer.apply_gradients(zip([s.read_value() for s in sums], variables))
        for s in sums:
            s.assign(tf.zeros_like(s))

    micro_step = 0
    for epoch in range(n_epochs):  # <- GAC110
        for x, y in dataset:
            forward_backward(x, y)
            micro_step += 1
            if micro_step % n_micro != 0:
                continue
            optimizer_step()
