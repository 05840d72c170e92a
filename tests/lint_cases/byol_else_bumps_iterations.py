# Modelled on a TF2 BYOL pre-training trainer (three optimizers, public,
# repository unknown): the Python loop sums the gradients and, when the
# cycle is not over, bumps each optimizer's iterations by hand, while the
# apply bumps them on the steps that end a cycle: the learning-rate
# schedules and Adam's bias correction count micro-steps.
import tensorflow as tf


class Trainer(object):
    def __init__(self, encoder, predictor, encoder_opt, predictor_opt, steps):
        self.encoder, self.predictor = encoder, predictor
        self.encoder_opt, self.predictor_opt = encoder_opt, predictor_opt
        self.steps, self.seen = steps, 0
        self.encoder_sums = [tf.zeros_like(v) for v in encoder.trainable_variables]
        self.predictor_sums = [tf.zeros_like(v) for v in predictor.trainable_variables]

    def apply_sums(self):
        self.encoder_opt.apply_gradients(
            zip([s / self.steps for s in self.encoder_sums], self.encoder.trainable_variables))
        self.predictor_opt.apply_gradients(
            zip([s / self.steps for s in self.predictor_sums], self.predictor.trainable_variables))
        self.encoder_sums = [s * 0 for s in self.encoder_sums]
        self.predictor_sums = [s * 0 for s in self.predictor_sums]
        self.seen = 0

    def train(self, dataset, loss_fn):
        for view1, view2 in dataset:
            self.seen += 1
            with tf.GradientTape(persistent=True) as tape:
                loss = loss_fn(self.predictor(self.encoder(view1)), self.encoder(view2))
            enc = tape.gradient(loss, self.encoder.trainable_variables)
            pre = tape.gradient(loss, self.predictor.trainable_variables)
            self.encoder_sums = [s + g for s, g in zip(self.encoder_sums, enc)]
            self.predictor_sums = [s + g for s, g in zip(self.predictor_sums, pre)]
            if self.seen == self.steps:
                self.apply_sums()
            else:
                self.encoder_opt.iterations.assign_add(1)  # <- GAC107
                self.predictor_opt.iterations.assign_add(1)  # <- GAC107
