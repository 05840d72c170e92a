# Modelled on a YOLOv4 Keras training script: inside the tf.function step
# the micro-batch's own gradients are applied every call, and the Python
# list of sums is rebound there and never returned (the caller's list never
# changes).
import tensorflow as tf

global_step = tf.Variable(1, trainable=False, dtype=tf.int64)


@tf.function
def train_step(images, labels, accum_gradient, accum_steps):
    with tf.GradientTape() as tape:
        loss_val = compute_loss(labels, model(images, training=True))
    gradients = tape.gradient(loss_val, model.trainable_variables)
    accum_gradient = [(a + g) for a, g in zip(accum_gradient, gradients)]  # <- GAC105
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))  # <- GAC102
    if global_step % accum_steps == 0:
        optimizer.apply_gradients(zip([a / accum_steps for a in accum_gradient],
                                      model.trainable_variables))
    global_step.assign_add(1)
    return loss_val
