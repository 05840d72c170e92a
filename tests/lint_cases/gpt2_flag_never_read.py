# Modelled on the fine-tuning train.py of openai/gpt-2 as read for the
# corpus: `--accumulate_gradients` is parsed, but nothing reads it; the loop
# runs the plain apply op on every batch, whatever N the user passes.
import argparse

import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--learning_rate", type=float, default=2e-5)
parser.add_argument("--accumulate_gradients", metavar="N", type=int, default=1,
                    help="Accumulate gradients across N minibatches.")


def main():
    args = parser.parse_args()
    loss = tf.reduce_mean(tf.square(tf.get_variable("w", [4]) - 1.0))
    opt = tf.train.AdamOptimizer(learning_rate=args.learning_rate)
    train_vars = tf.trainable_variables()
    opt_grads = opt.compute_gradients(loss, var_list=train_vars)
    opt_apply = opt.apply_gradients(opt_grads)  # <- GAC102
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        while True:
            sess.run(opt_apply)
