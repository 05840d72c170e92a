# Modelled on maxeonyx/msc (training.py): a helper sums the gradients of a
# batch's training modes into sums it makes anew on every call, divides them
# by the number of modes and returns them with the mean loss (a sum of the
# losses divided: a report, not a scaled loss); one step applies what one
# call returns, the accumulating step sums N calls and divides by N. No
# finding.
import tensorflow as tf


def build(model, optimizer, weights, modes):
    def step_of(inputs, mode):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(inputs, mode=mode))
        return loss, tape.gradient(loss, weights)

    def combination(inputs):
        steps = 0
        accum_loss = tf.constant(0.0)
        accum_gradients = [tf.zeros_like(w) for w in weights]
        for mode in modes:
            steps += 1
            loss, gradients = step_of(inputs, mode)
            accum_gradients = [a + g for a, g in zip(accum_gradients, gradients)]
            accum_loss += loss
        accum_gradients = [a / steps for a in accum_gradients]
        accum_loss /= steps
        return accum_loss, accum_gradients

    @tf.function
    def train_step_grad_accum(batch, accum_steps):
        accum_gradients = [tf.zeros_like(w) for w in weights]
        for step in tf.range(accum_steps):
            _, gradients = combination(batch[step])
            accum_gradients = [a + g for a, g in zip(accum_gradients, gradients)]
        accum_gradients = [a / tf.cast(accum_steps, tf.float32) for a in accum_gradients]
        optimizer.apply_gradients(zip(accum_gradients, weights))

    @tf.function
    def train_step_normal(inputs):
        loss, gradients = combination(inputs)
        optimizer.apply_gradients(zip(gradients, weights))
        return loss

    return train_step_grad_accum, train_step_normal
