# Modelled on CJMenart/Direct-Prior-Prediction-CNN's train ops (TF1 graph):
# the gradients are kept on self, clipped there by value when an option
# says so, then each image's gradient is added to accumulator variables
# and their sum is applied: a clip per micro-batch (GAC106) and a sum never
# divided (GAC101).
import tensorflow as tf


class TrainOps(object):
    def __init__(self, loss, optimizer, clipped):
        trainable_vars = tf.trainable_variables()
        self._gradients = optimizer.compute_gradients(loss, var_list=trainable_vars)
        if clipped:
            self._gradients = [(tf.clip_by_value(g, -1.0, 1.0), v)  # <- GAC106
                               for g, v in self._gradients]
        self._accum = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False)
                       for v in trainable_vars]
        self._accumulate = [self._accum[i].assign_add(gv[0])
                            for i, gv in enumerate(self._gradients)]
        self._apply = optimizer.apply_gradients(  # <- GAC101
            [(self._accum[i], gv[1]) for i, gv in enumerate(self._gradients)])
        self._clear = [a.assign(tf.zeros_like(a)) for a in self._accum]
