# Modelled on a YOLOv4 TF2 trainer (public, repo unknown): the step applies
# when the global step is a multiple of N or, training by epochs, at an
# epoch's last batch (an ``or`` whose side is an ``and``); the epoch makes
# the sums anew only where a cycle ended. No cycle is carried or dropped
# (clean for GAC110). The step divides nothing (GAC101).
import tensorflow as tf

global_step = tf.Variable(1, trainable=False, dtype=tf.int64)
accum_steps = 4


def train_step(images, labels, model, sums):
    with tf.GradientTape() as tape:
        loss = model.loss(labels, model(images, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    sums = [a + g for a, g in zip(sums, grads)]
    if global_step % accum_steps == 0 or (
            global_step % steps_per_epoch == 0 and not train_by_steps):
        model.optimizer.apply_gradients(zip(sums, model.trainable_variables))  # <- GAC101
    global_step.assign_add(1)
    return sums


sums = [tf.zeros_like(v) for v in model.trainable_variables]
for epoch in range(total_epochs):
    if (global_step.numpy() - 1) % accum_steps == 0 or (
            not train_by_steps and (global_step.numpy() - 1) % steps_per_epoch == 0):
        sums = [tf.zeros_like(v) for v in model.trainable_variables]
    for images, labels in train_set:
        sums = train_step(images, labels, model, sums)
