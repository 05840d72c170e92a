# Modelled on a DisCoCirc (compositional NLP circuits) Keras trainer
# (public, repository unknown): train_step walks the batch one example at
# a time, takes each example's gradients of its own cross-entropy
# (tf.nn.softmax_cross_entropy_with_logits of one example, a mean of one)
# from a helper method, adds them up and applies the sum: the step grows
# with the batch size (GAC101).
import tensorflow as tf
from tensorflow import keras


class CircuitTrainer(keras.Model):
    def __init__(self, dataset, **kwargs):
        super(CircuitTrainer, self).__init__(**kwargs)
        self.dataset = dataset

    def train_step(self, batch):
        grads = None
        for idx in batch:
            loss, grd = self.train_step_for_sample(self.dataset[int(idx.numpy())])
            grads = grd if grads is None else [g1 + g2 for g1, g2 in zip(grads, grd)]
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))  # <- GAC101
        return {"loss": loss}

    def train_step_for_sample(self, sample):
        with tf.GradientTape() as tape:
            circuit, labels = sample
            loss = tf.nn.softmax_cross_entropy_with_logits(logits=self(circuit), labels=labels)
        return loss, tape.gradient(loss, self.trainable_weights)
