# Modelled on a tf.distribute trainer base class (a BaseBot dataclass):
# the replica step takes the first micro-batch's gradients, adds the other
# N - 1 in a loop over range(1, N), divides by N and applies once; with N
# == 1 it takes one batch's gradients and applies them as they are. The
# loop walks micro-batches, not variables, and the N == 1 arm has nothing
# to divide: no finding.
import tensorflow as tf


class BaseBot(object):
    def __init__(self, model, optimizer, strategy, loss_fn, gradient_accumulation_steps):
        self.model, self.optimizer, self.strategy = model, optimizer, strategy
        self.loss_fn = loss_fn
        self.gradient_accumulation_steps = gradient_accumulation_steps

    def build(self):
        @tf.function
        def get_gradient(inputs, target):
            with tf.GradientTape() as tape:
                loss_ = self.loss_fn(target, self.model(inputs, training=True))
            return loss_, tape.gradient(loss_, self.model.trainable_variables)

        def train_one_step(input_tensor_list, target):
            if self.gradient_accumulation_steps == 1:
                loss, gradients = get_gradient(input_tensor_list[0], target)
            else:
                loss, gradients = get_gradient(input_tensor_list[0], target)
                for i in range(1, self.gradient_accumulation_steps):
                    loss_, gradients_ = get_gradient(input_tensor_list[i], target)
                    gradients = [g1 + g2 for g1, g2 in zip(gradients, gradients_)]
                    loss = loss + loss_
                gradients = [g / float(self.gradient_accumulation_steps) for g in gradients]
                loss = loss / float(self.gradient_accumulation_steps)
            self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))
            return loss
        self._train_one_step = train_one_step

    def train_one_step(self, input_tensors, target):
        loss = self.strategy.run(self._train_one_step, args=(input_tensors, target))
        return self.strategy.reduce(tf.distribute.ReduceOp.MEAN, loss, axis=None)
