# Modelled on the MirroredStrategy custom loops of the TF tutorials, in an
# accumulating variant written for this project: each micro-step's
# per-replica gradients are summed across replicas with strategy.reduce
# before they are added, an all-reduce per micro-step.
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)
    sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]
N_MICRO = 4


def replica_grads(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y)) / N_MICRO
    return tape.gradient(loss, model.trainable_variables)


@tf.function
def micro_step(x, y):
    per_replica = strategy.run(replica_grads, args=(x, y))
    grads = [strategy.reduce(tf.distribute.ReduceOp.SUM, g, axis=None)  # <- GAC104
             for g in per_replica]
    for s, g in zip(sums, grads):
        s.assign_add(g)


@tf.function
def apply_sums():
    optimizer.apply_gradients(zip(sums, model.trainable_variables))
    for s in sums:
        s.assign(tf.zeros_like(s))


def train(dataset):
    for i, (x, y) in enumerate(dataset):
        micro_step(x, y)
        if (i + 1) % N_MICRO == 0:
            apply_sums()
