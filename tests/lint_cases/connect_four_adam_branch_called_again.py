# Modelled on a Connect-Four dueling DQN's optimizer (a Keras Adam subclass
# used through fit): apply_gradients adds the batch's gradients to
# accumulators, runs the parent's apply by tf.cond when
# iterations % steps_per_update == 0, and then calls the same branch again
# inside control_dependencies to zero the accumulators after it: the
# parent's apply runs on every batch (GAC102), on the batch's own gradients.
import tensorflow as tf


class GradientAccumulation(tf.keras.optimizers.Adam):
    def __init__(self, steps_per_update, *args, **kwargs):
        super(GradientAccumulation, self).__init__(*args, **kwargs)
        self.steps_per_update = steps_per_update
        self.accumulators = None

    def apply_gradients(self, grads_and_vars, name=None):
        grads, variables = list(zip(*grads_and_vars))
        if self.accumulators is None:
            self.accumulators = [tf.Variable(tf.zeros_like(g), trainable=False) for g in grads]

        def apply_grads():
            return super(GradientAccumulation, self).apply_gradients(zip(grads, variables), name)

        for grad, accumulator in zip(grads, self.accumulators):
            accumulator.assign_add(grad)
        tf.cond(tf.equal(self.iterations % self.steps_per_update, 0), apply_grads,
                lambda: tf.constant(0, tf.int64))
        with tf.control_dependencies([apply_grads()]):  # <- GAC102
            for accumulator in self.accumulators:
                accumulator.assign(tf.zeros_like(accumulator))
