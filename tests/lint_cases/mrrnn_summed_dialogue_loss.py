# Modelled on phineasng/MrRNN's hierarchical dialogue model (TF1 graph):
# the loss is a sum over the tokens of an utterance (tf.reduce_sum, no
# division), the gradients of the utterances of one dialogue are summed
# into variables and applied once. A sum of sums is the big batch's sum:
# applying it undivided is right, so lint must stay silent here.
import tensorflow as tf


class DialogueModel(object):
    def build_loss(self, word_logits, word_targets, coarse_logits, coarse_targets):
        word = tf.nn.softmax_cross_entropy_with_logits(logits=word_logits, labels=word_targets)
        coarse = tf.nn.softmax_cross_entropy_with_logits(logits=coarse_logits,
                                                         labels=coarse_targets)
        self.loss = -tf.reduce_sum(word) - 0.5 * tf.reduce_sum(coarse)
        self.optimizer = tf.train.AdamOptimizer(1e-3)

    def build_accumulation(self):
        params = tf.trainable_variables()
        sums = [tf.Variable(tf.zeros_like(p.initialized_value()), trainable=False)
                for p in params]
        self.zero = [s.assign(tf.zeros_like(s)) for s in sums]
        pairs = self.optimizer.compute_gradients(self.loss, params)
        self.accumulate = [sums[i].assign_add(g) for i, (g, _) in enumerate(pairs)]
        self.apply = self.optimizer.apply_gradients(
            [(sums[i], v) for i, (_, v) in enumerate(pairs)])

