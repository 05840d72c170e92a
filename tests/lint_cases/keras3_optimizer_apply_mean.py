# Modelled on keras.io's Keras 3 guide "Writing a training loop from scratch
# in TensorFlow" (a tf.function step that updates with optimizer.apply), with
# the accumulation done right: the sums are divided by N before
# optimizer.apply, once per N micro-batches. Clean: lint must stay silent.
import keras
import tensorflow as tf

model = keras.Sequential([keras.layers.Dense(10)])
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
accum_steps = 8
sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]


@tf.function
def micro_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    for s, g in zip(sums, grads):
        s.assign_add(g)
    return loss


@tf.function
def apply_mean():
    optimizer.apply([s / accum_steps for s in sums], model.trainable_variables)
    for s in sums:
        s.assign(tf.zeros_like(s))


def train(dataset, epochs):
    for _ in range(epochs):
        for step, (x, y) in enumerate(dataset):
            micro_step(x, y)
            if (step + 1) % accum_steps == 0:
                apply_mean()
        if (step + 1) % accum_steps:
            apply_mean_partial = [s / ((step + 1) % accum_steps) for s in sums]
            optimizer.apply(apply_mean_partial, model.trainable_variables)
            for s in sums:
                s.assign(tf.zeros_like(s))
