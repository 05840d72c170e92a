# Modelled on the MLPerf ResNet-50 runnable for TF2 (tf.distribute, public,
# repository not named by the index): the cycle is keyed on the
# optimizer's own iterations; the branch that applies runs, per replica,
# the optimizer's apply_gradients (which advances iterations itself) and
# clears the sums, the other advances iterations by hand. Both sides
# advance the count: the test sees every micro-step (no GAC109 for a
# count that "stays at a multiple of N").
import tensorflow as tf


class Runnable(object):
    def __init__(self, strategy, model, optimizer, num_accumulation_steps):
        self.strategy, self.model, self.optimizer = strategy, model, optimizer
        self.num_accumulation_steps = num_accumulation_steps
        self.training_vars = model.trainable_variables
        with strategy.scope():
            self.accum_grads = [tf.Variable(tf.zeros_like(v), trainable=False,
                                            synchronization=tf.VariableSynchronization.ON_READ,
                                            aggregation=tf.VariableAggregation.SUM)
                                for v in self.training_vars]

    def maybe_apply(self, distribution):
        def apply_and_clear_for_each_replica():
            self.optimizer.apply_gradients(zip([a.read_value() for a in self.accum_grads],
                                               self.training_vars))
            for a in self.accum_grads:
                a.assign(tf.zeros_like(a), read_value=False)

        def apply_and_clear():
            distribution.extended.call_for_each_replica(apply_and_clear_for_each_replica, args=())
            return self.optimizer.iterations.assign_add(0, read_value=False)

        def advance():
            return self.optimizer.iterations.assign_add(1, read_value=False)

        tf.cond(tf.equal(self.optimizer.iterations % self.num_accumulation_steps,
                         self.num_accumulation_steps - 1), apply_and_clear, advance)
