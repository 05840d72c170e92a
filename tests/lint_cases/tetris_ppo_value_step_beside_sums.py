# Modelled on a Tetris PPO trainer (TF2, one tf.function, public,
# repository not named by the index): the policy's mini-batch is split
# into micro-batches whose gradients are summed, scaled by 1 / number of
# micro-batches and applied once; beside it, in the same function, the
# value model takes one full-batch step of its own gradients. That apply
# updates other variables than the sums do: no micro-batch apply (clean).
import tensorflow as tf


@tf.function
def train_step(p_model, v_model, micro_batches, boards, returns):
    sums = [tf.zeros_like(v) for v in p_model.trainable_variables]
    for batch in micro_batches:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(p_model.loss(batch))
        grads = tape.gradient(loss, p_model.trainable_variables)
        sums = [s + g for s, g in zip(sums, grads)]
    inv = 1.0 / len(micro_batches)
    p_model.optimizer.apply_gradients(zip([s * inv for s in sums], p_model.trainable_variables))
    with tf.GradientTape() as v_tape:
        value_loss = tf.reduce_mean(tf.square(v_model(boards) - returns))
    v_grads = v_tape.gradient(value_loss, v_model.trainable_variables)
    v_model.optimizer.apply_gradients(zip(v_grads, v_model.trainable_variables))
