# Modelled on a TF1 weakly supervised semantic parser for CNLVR (public,
# repository unknown): its supervised pre-training fetches each
# sentence's gradients and its mean cross-entropy in one session run
# (`grads, loss = sess.run([grads_op, cross_entropy])`), adds the
# gradients to a NumPy buffer and feeds the raw sum to the apply op's
# placeholders once per batch. The mean in the loss fetched beside the
# gradients divides nothing that is applied: GAC101.
import numpy as np
import tensorflow as tf

logits = tf.placeholder(tf.float32, [None, 30])
labels = tf.placeholder(tf.float32, [None, 30])
cross_entropy = tf.reduce_mean(
    tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
theta = tf.trainable_variables()
grads_op = tf.gradients(cross_entropy, theta)


def pretrain(sess, batches, learning_rate):
    holders = [tf.placeholder(tf.float32, v.shape) for v in theta]
    update_grads = tf.train.AdamOptimizer(learning_rate).apply_gradients(zip(holders, theta))
    buffer = [np.zeros(v.shape) for v in theta]
    for batch in batches:
        for sentence in batch:
            grads, loss = sess.run([grads_op, cross_entropy], feed_dict=sentence)
            for i, grad in enumerate(grads):
                buffer[i] += grad
        sess.run(update_grads, feed_dict={h: buffer[i] for i, h in enumerate(holders)})  # <- GAC101
        for i, grad in enumerate(buffer):
            buffer[i] = grad * 0
