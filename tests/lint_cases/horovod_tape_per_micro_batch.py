# Modelled on Horovod TF2 examples extended with accumulation: the
# DistributedGradientTape all-reduces every micro-batch's gradients.
import horovod.tensorflow as hvd
import tensorflow as tf

ACCUM_STEPS = 4
sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]


@tf.function
def micro_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x)) / ACCUM_STEPS
    tape = hvd.DistributedGradientTape(tape)  # <- GAC104
    grads = tape.gradient(loss, model.trainable_variables)
    for s, g in zip(sums, grads):
        s.assign_add(g)


@tf.function
def apply_step():
    optimizer.apply_gradients(zip(sums, model.trainable_variables))
    return [s.assign(s * 0.0) for s in sums]


step = 0
for x, y in dataset:
    micro_step(x, y)
    step += 1
    if step == ACCUM_STEPS:
        apply_step()
        step = 0
