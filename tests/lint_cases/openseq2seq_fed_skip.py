# Modelled on NVIDIA/OpenSeq2Seq's TF1 training loop: whether the graph
# skips the update is fed each step from a Python counter that starts at 0
# and is advanced at the end of the loop, so the first update applies one
# micro-batch.
import tensorflow as tf


def train(model, fetches, iter_size):
    step = 0
    with tf.train.MonitoredTrainingSession() as sess:
        while not sess.should_stop():
            feed = {}
            if iter_size > 1:
                feed[model.skip_update_ph] = step % iter_size != 0  # <- GAC109
            sess.run(fetches, feed)
            step += 1


def train_fixed(model, fetches, iter_size):
    step = 0
    with tf.train.MonitoredTrainingSession() as sess:
        while not sess.should_stop():
            feed = {}
            step += 1
            feed[model.skip_update_ph] = step % iter_size != 0
            sess.run(fetches, feed)
