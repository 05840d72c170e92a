# Modelled on a Keras GAOptimizer wrapper (TF2, public, repo unknown): the
# accumulation runs per replica, and the gate is a tf.cond inside the
# function handed to merge_call, in cross-replica context, where it calls
# call_for_each_replica(apply); no tf.cond around apply_gradients in
# replica context, so MirroredStrategy runs it. Clean.
import tensorflow as tf


class GAOptimizer(tf.keras.optimizers.Optimizer):
    def __init__(self, optimizer, gradient_accumulation_steps=4, name="GAOptimizer", **kwargs):
        super().__init__(name=name, **kwargs)
        self.optimizer = optimizer
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.step = tf.Variable(0, dtype=tf.int64, trainable=False)
        self.accumulated_grads = None

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        grads_and_vars = list(grads_and_vars)
        if self.accumulated_grads is None:
            self.accumulated_grads = [tf.Variable(tf.zeros_like(v), trainable=False)
                                      for _, v in grads_and_vars]
        self.step.assign_add(1)
        should_apply = tf.equal(self.step % self.gradient_accumulation_steps, 0)
        for i, (grad, _) in enumerate(grads_and_vars):
            self.accumulated_grads[i].assign_add(grad)

        def _cross_replica_apply(strategy, grads_and_vars):
            def _apply_fn():
                strategy.extended.call_for_each_replica(
                    self._apply_accumulated, args=(grads_and_vars,))
            tf.cond(should_apply, _apply_fn, lambda: None)

        tf.distribute.get_replica_context().merge_call(
            _cross_replica_apply, args=(grads_and_vars,))
        tf.cond(should_apply, self._reset, lambda: None)
        return self.optimizer.iterations

    def _apply_accumulated(self, grads_and_vars):
        n = tf.cast(self.gradient_accumulation_steps, tf.float32)
        self.optimizer.apply_gradients(
            [(self.accumulated_grads[i] / n, v) for i, (_, v) in enumerate(grads_and_vars)])

    def _reset(self):
        for acc in self.accumulated_grads:
            acc.assign(tf.zeros_like(acc))


def build(model):
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        model.compile(optimizer=GAOptimizer(tf.keras.optimizers.Adam()), loss="mse")
    return model
