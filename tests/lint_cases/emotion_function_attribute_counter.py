# Modelled on an emotion-recognition CNN trainer (TF2 tf.function, public,
# repo unknown): the step keeps its micro-step count as an attribute of the
# tf.function itself, set to 0 before the loop. The attribute is Python
# state: the increment and the test run once, when tracing (GAC105).
import tensorflow as tf

ACCUMULATION_STEPS = 4
optimizer = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
sums = [tf.Variable(tf.zeros_like(w), trainable=False) for w in model.trainable_weights]


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True)) / ACCUMULATION_STEPS
    grads = tape.gradient(loss, model.trainable_weights)
    for s, g in zip(sums, grads):
        s.assign_add(g)
    train_step.count += 1  # <- GAC105
    if train_step.count == ACCUMULATION_STEPS:
        optimizer.apply_gradients(zip(sums, model.trainable_weights))
        for s in sums:
            s.assign(tf.zeros_like(s))
        train_step.count = 0
    return loss


train_step.count = 0
for x, y in dataset.take(4000):
    train_step(x, y)
