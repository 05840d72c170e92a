# Modelled on a Keras training script's "gradient accumulation" callback
# (TF2, public, repository not named by the index): at the start of each
# cycle its batch hook "resets the gradients" by zeroing the model's own
# weights (GAC103), and at a batch's end it returns early to "skip the
# optimizer update" on the other batches. A callback cannot skip fit's
# update: the compiled optimizer applies on every batch (GAC102).
import tensorflow as tf


class GradientAccumulation(tf.keras.callbacks.Callback):
    def __init__(self, accumulation_steps=4):
        super(GradientAccumulation, self).__init__()
        self.accumulation_steps = accumulation_steps
        self.step_counter = 0

    def on_train_batch_begin(self, batch, logs=None):
        if self.step_counter % self.accumulation_steps == 0:
            for var in self.model.trainable_variables:
                var.assign(tf.zeros_like(var))  # <- GAC103

    def on_train_batch_end(self, batch, logs=None):
        self.step_counter += 1
        if self.step_counter % self.accumulation_steps != 0:
            return  # <- GAC102


def train(model, train_ds, epochs):
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(train_ds, epochs=epochs, callbacks=[GradientAccumulation(4)])
