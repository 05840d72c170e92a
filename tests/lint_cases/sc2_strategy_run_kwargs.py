# Modelled on chscheller/sc2_imitation_learning's learner (tf.distribute):
# accumulation and apply are functions handed to strategy.run with their
# sums in kwargs; the apply runs when global_step % N == 0, and global_step
# is advanced after the step, so the first update holds one micro-batch.
import tensorflow as tf


def accumulate(sums, model, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    for s, g in zip(sums, tape.gradient(loss, model.trainable_variables)):
        s.assign_add(g)


def apply_sums(sums, model, n_micro, optimizer):
    optimizer.apply_gradients(zip([s / float(n_micro) for s in sums], model.trainable_variables))
    for s in sums:
        s.assign(tf.zeros_like(s))


def train(strategy, model, optimizer, batches, n_micro):
    sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]
    global_step = tf.Variable(0, dtype=tf.int64, trainable=False)

    @tf.function
    def step(x, y):
        strategy.run(accumulate, kwargs={"sums": sums, "model": model, "x": x, "y": y})
        if tf.math.mod(global_step, n_micro) == 0:  # <- GAC109
            strategy.run(apply_sums, kwargs={"sums": sums, "model": model,
                                              "n_micro": n_micro, "optimizer": optimizer})

    for x, y in batches:
        step(x, y)
        global_step.assign_add(1)
