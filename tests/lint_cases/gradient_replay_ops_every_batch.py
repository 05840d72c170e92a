# Modelled on a continual-learning trainer with a GradientReplay
# regulariser (TF1 sessions): the model's step adds, to each gradient of
# the loss, the replayed models' predicted gradients times lambda, then
# applies: one step's gradient, nothing accumulated across batches (no
# finding there). Fitting the regulariser runs ops another module builds:
# in every pass of its batch loop, the op that adds to the sums, then the
# apply op, then the zeroing op: every batch is applied alone (GAC102).
import numpy as np
import tensorflow as tf


class ReplayTrainer(object):
    def __init__(self, model, sess, lam):
        self.model, self.sess, self.lam = model, sess, lam
        self.opt = tf.train.AdamOptimizer(1e-3)
        self.global_step = tf.train.get_or_create_global_step()
        self.replay_models = []

    def update_loss_and_ops(self):
        grads_and_params = self.opt.compute_gradients(self.model.loss, self.model.params)
        self.grads, _ = zip(*grads_and_params)
        self.grads = list(self.grads)
        for replay_model in self.replay_models:
            for i, grad in enumerate(replay_model.pred_grads):
                self.grads[i] += self.lam * grad
        self.step_op = self.opt.apply_gradients(
            zip(self.grads, self.model.params), global_step=self.global_step)

    def fit_reg(self, replay_model, x, y, batch_size):
        nb_batch = int(np.ceil(x.shape[0] / batch_size))
        for epoch in range(30):
            self.model.assign_data(self.sess, x, y)
            for i in range(nb_batch):
                self.sess.run(replay_model.apply_noise_to_target_ops)
                self.sess.run(replay_model.cum_grad_ops)
                self.sess.run(replay_model.apply_grad_ops)  # <- GAC102
                self.sess.run(replay_model.zero_grad_ops)
