# Modelled on minimaxir/gpt-2-simple src/accumulate.py: an accumulating
# wrapper whose apply lives in another method than the accumulation.
import tensorflow as tf


class SummingOptimizer(object):
    def __init__(self, opt, var_list):
        self.opt = opt
        self.var_list = var_list
        self.sums = {v: tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                     for v in var_list}

    def add_micro_batch(self, loss):
        pairs = self.opt.compute_gradients(loss, self.var_list)
        return tf.group(*[self.sums[v].assign_add(g) for g, v in pairs])

    def apply(self):
        pairs = [(s, v) for v, s in self.sums.items()]
        return self.opt.apply_gradients(pairs)  # <- GAC101
