# Modelled on the custom training loops of TF2 image-classification
# examples that accumulate with a global batch: the loss is a sum over the
# micro-batch's examples divided by the global batch size, which the script
# builds as the micro-batch size times N. The sums of N micro-batches are
# then the big batch's mean gradient, applied as they are: no finding.
import tensorflow as tf

BATCH_SIZE = 32
ACCUM_STEPS = 4
GLOBAL_BATCH_SIZE = BATCH_SIZE * ACCUM_STEPS


def train(model, optimizer, dataset):
    sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]

    @tf.function
    def accumulate(x, y):
        with tf.GradientTape() as tape:
            per_example = tf.keras.losses.sparse_categorical_crossentropy(y, model(x))
            loss = tf.reduce_sum(per_example) / GLOBAL_BATCH_SIZE
        for s, g in zip(sums, tape.gradient(loss, model.trainable_variables)):
            s.assign_add(g)

    @tf.function
    def apply():
        optimizer.apply_gradients(zip(sums, model.trainable_variables))
        for s in sums:
            s.assign(tf.zeros_like(s))

    for step, (x, y) in enumerate(dataset.batch(BATCH_SIZE).take(1000 * ACCUM_STEPS)):
        accumulate(x, y)
        if (step + 1) % ACCUM_STEPS == 0:
            apply()
