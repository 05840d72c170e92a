# Modelled on a Horovod transformer fine-tuning script (TF2, tf.function
# step): each batch's gradients come from a step whose tape is wrapped in
# hvd.DistributedGradientTape, so every micro-batch is all-reduced (GAC104);
# they are summed by a helper of another module handed N
# (accumulated_gradients(gradients, g, N), which divides), and applied every
# N batches. Each epoch starts the sums anew with no flush after its loop:
# its last partial cycle is dropped (GAC110).
import horovod.tensorflow as hvd
import tensorflow as tf
from training_utils import accumulated_gradients


def train(model, optimizer, loss_fn, train_ds, epochs, batch_size, steps):
    trainable = model.trainable_variables

    @tf.function
    def train_step(inputs, y_true, first_batch):
        with tf.GradientTape() as tape:
            y_pred = model(inputs, training=True)
            loss = tf.reduce_sum(loss_fn(y_true, y_pred)) / batch_size
        tape = hvd.DistributedGradientTape(tape)  # <- GAC104
        grads = tape.gradient(loss, trainable)
        return loss, grads, tf.math.sigmoid(y_pred)

    for epoch in range(epochs):
        gradients = None  # <- GAC110
        for batch_nr, (inputs, y_true) in enumerate(train_ds):
            loss, current, y_pred = train_step(inputs, y_true, batch_nr == 0)
            gradients = accumulated_gradients(gradients, current, steps)
            if (batch_nr + 1) % steps == 0:
                optimizer.apply_gradients(zip(gradients, trainable))
                gradients = None
