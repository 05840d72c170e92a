# Modelled on a TF1 REINFORCE service-chain placement script (public,
# repository unknown): `cnt` is made 0 at each epoch's start, each chain's
# reward-scaled gradients are added to stacked accumulators, and when
# `cnt == batch_size` the sums are applied (if the placement is feasible)
# and zeroed, the reset of `cnt` sitting in both arms of that inner `if`.
# The stacked sums are not zeroed at an epoch's start, so the chains since
# the last apply are carried into the next epoch's first one.
import tensorflow as tf


def build(loss, params, reward, learning_rate):
    optimizer = tf.train.AdamOptimizer(learning_rate)
    pairs = optimizer.compute_gradients(loss, params)
    accumulators = [tf.Variable(tf.zeros_like(v), trainable=False) for v in params]
    stacked = [tf.Variable(tf.zeros_like(v), trainable=False) for v in params]
    accumulate_ops = [a.assign_add(g / 4.0) for a, (g, _) in zip(accumulators, pairs)]
    accumulate_stacked_ops = [s.assign_add(a * reward) for s, a in zip(stacked, accumulators)]
    train_step = optimizer.apply_gradients(list(zip(stacked, params)))  # <- GAC101
    zero_ops = [a.assign(tf.zeros_like(a)) for a in accumulators]
    zero_stacked_ops = [s.assign(tf.zeros_like(s)) for s in stacked]
    return accumulate_ops, accumulate_stacked_ops, train_step, zero_ops, zero_stacked_ops


def run(sess, ops, chains, epochs, batch_size, feasible):
    accumulate_ops, accumulate_stacked_ops, train_step, zero_ops, zero_stacked_ops = ops
    for epoch in range(epochs):  # <- GAC110
        cnt = 0
        for chain in chains:
            for step in chain:
                sess.run(accumulate_ops, feed_dict=step)
            sess.run(accumulate_stacked_ops, feed_dict=chain.reward_feed)
            sess.run(zero_ops)
            cnt += 1
            if cnt == batch_size:
                if feasible(chain):
                    sess.run(train_step)
                    cnt = 0
                    sess.run(zero_stacked_ops)
                else:
                    sess.run(zero_stacked_ops)
                    cnt = 0
