# Modelled on a food-image classifier script (TF2 eager, public, repo
# unknown): the step adds each batch's gradients to the sums and then
# applies "if acc_gradients[0] is not None", which sums just added to
# always are. It applies on every batch (GAC102), undivided (GAC101);
# nothing is left at an epoch's end (no GAC110).
import tensorflow as tf


def accumulation_step(model, x, y, optimizer, acc_gradients):
    with tf.GradientTape() as tape:
        loss = tf.keras.losses.sparse_categorical_crossentropy(y, model(x, training=True))
    gradients = tape.gradient(loss, model.trainable_variables)
    for i in range(len(acc_gradients)):
        acc_gradients[i] += gradients[i]
    if acc_gradients[0] is not None:
        optimizer.apply_gradients(zip(acc_gradients, model.trainable_variables))  # <- GAC101 GAC102
        for i in range(len(acc_gradients)):
            acc_gradients[i] = tf.zeros_like(acc_gradients[i])
    return loss


acc_gradients = [tf.zeros_like(v) for v in model.trainable_variables]
for epoch in range(10):
    for step, (x, y) in enumerate(train_dataset):
        loss = accumulation_step(model, x, y, optimizer, acc_gradients)
