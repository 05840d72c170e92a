# Modelled on Mihail-sudo/UAI_final_task's U-Net trainer (Keras train_step):
# the accumulators are made on self inside train_step as a Python list of
# tf.zeros_like tensors, not variables. fit traces train_step once, so the
# list holds the trace's tensors, and assign_add on a tensor has nothing to
# keep between steps (GAC105).
import tensorflow as tf


class AccumulatingUNet(tf.keras.Model):
    def __init__(self, unet, accum_steps=4, **kwargs):
        super(AccumulatingUNet, self).__init__(**kwargs)
        self.unet = unet
        self.accum_steps = accum_steps
        self._accum_grads = None
        self._accum_counter = tf.Variable(0, dtype=tf.int32, trainable=False)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(x, y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_weights)
        if self._accum_grads is None:
            self._accum_grads = [tf.zeros_like(g) for g in grads]  # <- GAC105
        for acc, g in zip(self._accum_grads, grads):
            acc.assign_add(g / tf.cast(self.accum_steps, g.dtype))
        self._accum_counter.assign_add(1)
        if self._accum_counter >= self.accum_steps:  # <- GAC110
            self.optimizer.apply_gradients(zip(self._accum_grads, self.trainable_weights))
            self._accum_counter.assign(0)
            for acc in self._accum_grads:
                acc.assign(tf.zeros_like(acc))
        return {"loss": loss}
