# Modelled on Keras classifier helpers with mixed precision (TF2, public,
# repo unknown): the step divides the loss by N in place (`loss /=
# accum_steps`) and then hands it to the optimizer's get_scaled_loss, whose
# result the tape differentiates. The loss reaching the gradient is
# divided (no GAC101); fit's loop ends with a partial cycle it never
# applies (GAC110).
import tensorflow as tf


def fit(model, dataset, loss_fn, optimizer, accum_steps=4):
    @tf.function
    def grad(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
            if accum_steps > 1:
                loss /= accum_steps
            scaled_loss = optimizer.get_scaled_loss(loss)
        scaled = tape.gradient(scaled_loss, model.trainable_variables)
        return loss, optimizer.get_unscaled_gradients(scaled)

    for i, (x, y) in enumerate(dataset):  # <- GAC110
        if i % accum_steps == 0:
            sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                    for v in model.trainable_variables]
        loss_value, gradients = grad(x, y)
        sums = [sums[j].assign_add(g) for j, g in enumerate(gradients)]
        if (i + 1) % accum_steps == 0:
            optimizer.apply_gradients(zip(sums, model.trainable_variables))
