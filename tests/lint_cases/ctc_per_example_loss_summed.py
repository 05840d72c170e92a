# Modelled on a French TF1 CTC acoustic model trained under a Supervisor
# (public, repository unknown): the gradients are taken of the vector
# `tf.nn.ctc_loss` returns, one loss per utterance, never reduced; the
# gradient of a vector is the gradient of its sum, so each micro-batch's
# gradient is a sum over its examples and the sum of the micro-batches is
# the big batch's own gradient. Applying it undivided is right: no GAC101.
import tensorflow as tf


class AcousticModel(object):
    def __init__(self, inputs, targets, seq_length, learning_rate):
        logits = tf.layers.dense(inputs, 29)
        per_utterance = tf.nn.ctc_loss(targets, logits, seq_length)
        self.loss_batch = tf.reduce_mean(per_utterance / tf.to_float(seq_length))
        self.global_step = tf.Variable(0, name="global_step", trainable=False)
        params = tf.trainable_variables()
        opt = tf.train.AdamOptimizer(learning_rate)
        pairs = opt.compute_gradients(per_utterance, params)
        sums = [tf.Variable(tf.zeros_like(p.initialized_value()), trainable=False)
                for p in params]
        self.zero_op = [s.assign(tf.zeros_like(s)) for s in sums]
        self.accumulate_op = [sums[i].assign_add(g) for i, (g, _) in enumerate(pairs)]
        self.apply_op = opt.apply_gradients([(sums[i], v) for i, (_, v) in enumerate(pairs)],
                                            global_step=self.global_step)

    def train(self, sess, batches, micro_batches_per_step):
        done = 0
        sess.run(self.zero_op)
        for inputs, targets, lengths in batches:
            sess.run(self.accumulate_op)
            done += 1
            if done % micro_batches_per_step == 0:
                sess.run(self.apply_op)
                sess.run(self.zero_op)
        if done % micro_batches_per_step:
            sess.run(self.apply_op)
            sess.run(self.zero_op)
