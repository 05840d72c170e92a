# Modelled on a question-answering fine-tuning script (TF2 Keras, public,
# repo unknown; two earlier sets held the same shape): a Callback sums the
# batch's gradients in on_train_batch_end and applies them with the
# model's optimizer every accum_steps batches, while fit runs the model's
# own train step, which applies the compiled optimizer on every batch: the
# callback's apply comes on top of a per-batch update.
import tensorflow as tf


class GradientAccumulation(tf.keras.callbacks.Callback):
    def __init__(self, accum_steps=2):
        super(GradientAccumulation, self).__init__()
        self.accum_steps = accum_steps
        self.step = 0
        self.sums = None

    def on_train_batch_begin(self, batch, logs=None):
        if self.step % self.accum_steps == 0:
            self.sums = [tf.zeros_like(v) for v in self.model.trainable_variables]

    def on_train_batch_end(self, batch, logs=None):
        grads = self.model.optimizer.get_gradients(self.model.total_loss,
                                                   self.model.trainable_variables)
        self.sums = [s + g / self.accum_steps for s, g in zip(self.sums, grads)]
        if (self.step + 1) % self.accum_steps == 0:
            self.model.optimizer.apply_gradients(zip(self.sums, self.model.trainable_variables))
        self.step += 1


def train(model, train_set, eval_set, epochs):
    model.compile(optimizer=tf.keras.optimizers.Adam(3e-5))
    accumulate = GradientAccumulation(accum_steps=2)
    return model.fit(train_set, epochs=epochs, callbacks=[accumulate],  # <- GAC102
                     validation_data=eval_set)
