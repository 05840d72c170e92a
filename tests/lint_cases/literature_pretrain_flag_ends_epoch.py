# Modelled on a Chinese-literature transformer's pretraining script
# (public, repository unknown): the epoch loop computes `is_accum_end`,
# true at the end of a cycle or at the epoch's last step, and hands it to
# the trainer instance's step, which applies and resets the sums when it
# is set. The epoch's last partial cycle is applied there: no finding
# (the step is followed into the trainer's class, and the flag read).
import tensorflow as tf


class Trainer(object):
    def __init__(self, model, optimizer, grad_accum_steps):
        self.model, self.optimizer = model, optimizer
        self.grad_accum_steps = grad_accum_steps
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in model.trainable_variables]

    def train_step(self, batch, is_accum_end):
        x, y = batch
        with tf.GradientTape() as tape:
            loss = self.model.compute_loss(x, y) / self.grad_accum_steps
        grads = tape.gradient(loss, self.model.trainable_variables)
        for total, g in zip(self.sums, grads):
            total.assign_add(g)
        if is_accum_end:
            self.optimizer.apply_gradients(zip(self.sums, self.model.trainable_variables))
            for total in self.sums:
                total.assign(tf.zeros_like(total))
        return loss


def pretrain(model, dataset, epochs, steps_per_epoch, grad_accum_steps):
    trainer = Trainer(model, tf.keras.optimizers.Adam(1e-4), grad_accum_steps)
    for epoch in range(epochs):
        for step, batch in enumerate(dataset):
            if step >= steps_per_epoch:
                break
            is_accum_end = ((step + 1) % grad_accum_steps == 0) or \
                           ((step + 1) == steps_per_epoch)
            trainer.train_step(batch, is_accum_end)
