# Modelled on xianlopez/classif_nets' TF1 training environment: each epoch
# restarts its step count at 0, zeroes the sums when step % N == 0 and
# applies when (step + 1) % N == 0, so an epoch whose batches are not a
# multiple of N leaves a partial cycle that the next epoch zeroes.
import tensorflow as tf


def train(sess, zero_ops, accum_ops, train_op, init_op, n_epochs, n_accum):
    for epoch in range(n_epochs):  # <- GAC110
        sess.run(init_op)
        step = 0
        while True:
            try:
                if step % n_accum == 0:
                    sess.run(zero_ops)
                sess.run(accum_ops)
                if (step + 1) % n_accum == 0:
                    sess.run(train_op)
                step += 1
            except tf.errors.OutOfRangeError:
                break


def train_flushed(sess, zero_ops, accum_ops, train_op, init_op, n_epochs, n_accum):
    # (zeroed after each apply, and the epoch's rest applied after its loop)
    for epoch in range(n_epochs):
        sess.run([init_op, zero_ops])
        step = 0
        while True:
            try:
                sess.run(accum_ops)
            except tf.errors.OutOfRangeError:
                break
            step += 1
            if step % n_accum == 0:
                sess.run(train_op)
                sess.run(zero_ops)
        if step % n_accum:
            sess.run(train_op)
