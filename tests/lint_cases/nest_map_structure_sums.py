# Modelled on a gradient-compression study's worker script (met while
# searching public code): an eager loop that keeps its running sum with
# tf.nest.map_structure(lambda x, y: x + y, sums, grads). Here the sum of N
# micro-batches is applied as it is (GAC101); the second loop divides it with
# another map_structure first, and applies the last partial cycle's mean:
# clean.
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.SGD(0.1, momentum=0.9)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
accum_steps = 4


def gradients(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    return tape.gradient(loss, model.trainable_variables)


def train_summed(dataset):
    sums = [tf.zeros_like(v) for v in model.trainable_variables]
    for step, (x, y) in enumerate(dataset):  # <- GAC110
        sums = tf.nest.map_structure(lambda x, y: x + y, sums, gradients(x, y))
        if (step + 1) % accum_steps == 0:
            optimizer.apply_gradients(zip(sums, model.trainable_variables))  # <- GAC101
            sums = [tf.zeros_like(v) for v in model.trainable_variables]


def train_mean(dataset):
    sums = [tf.zeros_like(v) for v in model.trainable_variables]
    for step, (x, y) in enumerate(dataset):
        sums = tf.nest.map_structure(tf.add, sums, gradients(x, y))
        if (step + 1) % accum_steps == 0:
            mean = tf.nest.map_structure(lambda s: s / accum_steps, sums)
            optimizer.apply_gradients(zip(mean, model.trainable_variables))
            sums = [tf.zeros_like(v) for v in model.trainable_variables]
    left = (step + 1) % accum_steps
    if left:
        mean = tf.nest.map_structure(lambda s: s / left, sums)
        optimizer.apply_gradients(zip(mean, model.trainable_variables))
