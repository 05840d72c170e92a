# Modelled on horovod's local gradient aggregation helper for Keras
# optimizers: on the micro-steps that do not apply, the skipping branch of
# the cond advances the optimizer's iterations (and a second cond on the
# same predicate the estimator's global step), so both count micro-steps.
import tensorflow as tf


class Aggregation(object):
    def __init__(self, n_micro):
        self.n_micro = n_micro
        self.counter = tf.Variable(0, trainable=False)

    def apply_gradients(self, apply_closure, optimizer, global_step=None):
        def count_skipped():
            return optimizer.iterations.assign_add(1).op  # <- GAC107

        def count_global():
            if global_step is None:
                return tf.no_op()
            return global_step.assign_add(tf.constant(1, dtype=tf.int64))  # <- GAC107

        applied = tf.cond(pred=tf.equal(self.counter, 0), true_fn=apply_closure,
                          false_fn=count_skipped)
        with tf.control_dependencies([applied]):
            return tf.cond(pred=tf.equal(self.counter, 0), true_fn=tf.no_op,
                           false_fn=count_global)
