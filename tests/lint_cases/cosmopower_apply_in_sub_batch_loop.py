# Modelled on alessiospuriomancini/cosmopower's network trainer (TF2 eager):
# the step that accumulates makes its sums anew on each call, weights each
# sub-batch's gradient by its share of the batch, and then, indented one
# level too deep, applies inside the loop over sub-batches: a partial sum
# on every sub-batch (GAC102). The epoch loop picks the plain or the
# accumulating step with `if steps == 1`, which is no cycle condition, and
# nothing outlives a call of the step, so no partial cycle is carried.
import tensorflow as tf


class Emulator(tf.keras.Model):
    def step_with_accumulation(self, params, features, accumulation_steps):
        data = tf.data.Dataset.from_tensor_slices((params, features)).batch(
            int(features.shape[0] / accumulation_steps))
        sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in self.trainable_variables]
        total = tf.Variable(0., trainable=False)
        for p, f in data:
            loss, grads = self.loss_and_gradients(p, f)
            for i in range(len(sums)):
                sums[i].assign_add(grads[i] * f.shape[0] / features.shape[0])
            total.assign_add(loss * f.shape[0] / features.shape[0])
            self.optimizer.apply_gradients(zip(sums, self.trainable_variables))  # <- GAC102
        return total

    def train(self, dataset, epochs, accumulation_steps):
        for epoch in range(epochs):
            for params, features in dataset:
                if accumulation_steps == 1:
                    self.plain_step(params, features)
                else:
                    self.step_with_accumulation(params, features, accumulation_steps)
