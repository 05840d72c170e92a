# Modelled on a CIFAR-10 MirroredStrategy trainer (TF2, public, repo
# unknown): the step runs the accumulation on every replica, then, when the
# counter reaches a multiple of N, runs the apply-and-reset function by
# strategy.run under that test; nothing flushes the sums at an epoch's end,
# so each epoch's partial cycle is carried into the next.
import tensorflow as tf

ACCUMULATION_STEPS = 8
strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.applications.ResNet50(weights=None, classes=10)
    optimizer = tf.keras.optimizers.SGD(0.1)
    gradient_accumulators = [
        tf.Variable(tf.zeros_like(v), trainable=False,
                    synchronization=tf.VariableSynchronization.ON_READ)
        for v in model.trainable_variables]
    accumulation_counter = tf.Variable(0, trainable=False,
                                       synchronization=tf.VariableSynchronization.ON_READ)


def accumulation_step_fn(inputs):
    x, y = inputs
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, model(x)))
    grads = tape.gradient(loss, model.trainable_variables)
    for acc, g in zip(gradient_accumulators, grads):
        acc.assign_add(g)
    accumulation_counter.assign_add(1)


def apply_and_reset_step_fn():
    grads = [acc.read_value() / ACCUMULATION_STEPS for acc in gradient_accumulators]
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    for acc in gradient_accumulators:
        acc.assign(tf.zeros_like(acc))
    accumulation_counter.assign(0)


def distributed_train_step(dist_inputs):
    strategy.run(accumulation_step_fn, args=(dist_inputs,))
    count = strategy.experimental_local_results(accumulation_counter)[0]
    if tf.equal(count % ACCUMULATION_STEPS, 0):
        strategy.run(apply_and_reset_step_fn)


def train(dist_train_dataset, epochs):
    for epoch in range(epochs):  # <- GAC110
        for step, dist_inputs in enumerate(dist_train_dataset):
            distributed_train_step(dist_inputs)
