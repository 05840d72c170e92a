# Modelled on a SimCLR-style contrastive pretraining script (Keras
# train_step, public, repo unknown): the loss is the mean of its two
# directions, (loss_1_2 + loss_2_1) / 2, which divides by its number of
# terms, not by the number of micro-batches; the accumulated sum is then
# applied undivided.
import tensorflow as tf
from tensorflow import keras


class ContrastiveModel(keras.Model):
    def __init__(self, encoder, head, n_gradients=16, temperature=0.1):
        super().__init__()
        self.encoder, self.head = encoder, head
        self.temperature = temperature
        self.n_gradients = tf.constant(n_gradients, dtype=tf.int32)
        self.n_acum_step = tf.Variable(0, dtype=tf.int32, trainable=False)
        self.gradient_accumulation = [
            tf.Variable(tf.zeros_like(v), trainable=False)
            for v in encoder.trainable_weights + head.trainable_weights]

    def contrastive_loss(self, p1, p2):
        similarities = tf.matmul(p1, p2, transpose_b=True) / self.temperature
        labels = tf.range(tf.shape(p1)[0])
        loss_1_2 = keras.losses.sparse_categorical_crossentropy(labels, similarities, from_logits=True)
        loss_2_1 = keras.losses.sparse_categorical_crossentropy(
            labels, tf.transpose(similarities), from_logits=True)
        return (loss_1_2 + loss_2_1) / 2

    def train_step(self, data):
        self.n_acum_step.assign_add(1)
        x1, x2 = data
        with tf.GradientTape() as tape:
            loss = self.contrastive_loss(self.head(self.encoder(x1)), self.head(self.encoder(x2)))
        grads = tape.gradient(loss, self.encoder.trainable_weights + self.head.trainable_weights)
        for i in range(len(self.gradient_accumulation)):
            self.gradient_accumulation[i].assign_add(grads[i])
        tf.cond(tf.equal(self.n_acum_step, self.n_gradients), self.apply_accu_gradients, lambda: None)  # <- GAC110
        return {"loss": loss}

    def apply_accu_gradients(self):
        self.optimizer.apply_gradients(zip(  # <- GAC101
            self.gradient_accumulation, self.encoder.trainable_weights + self.head.trainable_weights))
        self.n_acum_step.assign(0)
        for acc in self.gradient_accumulation:
            acc.assign(tf.zeros_like(acc))
