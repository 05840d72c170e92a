# Modelled on a Keras optimizer wrapper for sparse embeddings (TF2,
# public, repo unknown): apply_gradients counts calls in a Python int and
# keeps the sums in a Python list, applying the inner optimizer when the
# count reaches N. Under fit the method runs once per trace (and once in
# all in a TF1 graph), so the count never moves per step (GAC105), and the
# test that reads it is fixed there: it applies on every call or never
# (GAC109).
import tensorflow as tf


class Accumulative(tf.keras.optimizers.Optimizer):
    def __init__(self, optimizer, accumulation_steps, name="Accumulative", **kwargs):
        super(Accumulative, self).__init__(name=name, **kwargs)
        self.optimizer = optimizer
        self.accumulation_steps = accumulation_steps
        self.counter = 0
        self.gradient_accumulator = None

    def accumulate(self, grads_and_vars):
        if self.gradient_accumulator is None:
            self.gradient_accumulator = [g / self.accumulation_steps for g, _ in grads_and_vars]
            return
        for i, (g, _) in enumerate(grads_and_vars):
            self.gradient_accumulator[i] += g / self.accumulation_steps

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        grads_and_vars = list(grads_and_vars)
        self.counter += 1  # <- GAC105
        self.accumulate(grads_and_vars)
        if self.counter % self.accumulation_steps == 0:  # <- GAC109
            variables = [v for _, v in grads_and_vars]
            self.optimizer.apply_gradients(zip(self.gradient_accumulator, variables))
            self.gradient_accumulator = None
