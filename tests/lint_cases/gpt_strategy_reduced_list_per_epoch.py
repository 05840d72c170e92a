# Modelled on a GPT fine-tuning helper class under tf.distribute (public,
# repository unknown): `strategy.run(train_step)` returns each replica's
# loss and gradients, the loop reduces the gradients across replicas on
# every micro-batch and appends them to a list made anew at each epoch's
# start, and `strategy.run(apply_grad, ...)` applies their mean when a
# batch count kept across epochs reaches a multiple of N. So: an
# all-reduce per micro-step (GAC104), the partial cycle dropped when the
# next epoch makes the list anew (GAC110), and after the first epoch the
# count no longer starts with the list: a short first cycle (GAC109).
import tensorflow as tf


class FineTuner(object):
    def __init__(self, model, strategy):
        self.model, self.strategy = model, strategy

    def train(self, dataset, epochs, batch_acc, lr):
        strategy = self.strategy

        @tf.function
        def train_step(batch):
            with tf.GradientTape() as tape:
                loss = self.model(batch[0], labels=batch[1]).loss
            return loss, tape.gradient(loss, self.model.trainable_variables)

        @tf.function
        def apply_grad(list_gradients):
            sums = [tf.math.add_n(grads) for grads in zip(*list_gradients)]
            means = [tf.math.divide(g, tf.cast(batch_acc, tf.float32)) for g in sums]
            optimizer.apply_gradients(zip(means, self.model.trainable_variables))

        with strategy.scope():
            optimizer = tf.keras.optimizers.AdamW(learning_rate=lr)
            batches = strategy.experimental_distribute_dataset(dataset)
            all_batch_count = 0
            for epoch in range(epochs):
                list_gradients = []  # <- GAC110
                for batch in batches:
                    all_batch_count = all_batch_count + 1
                    losses, grads = strategy.run(train_step, args=(batch,))
                    list_gradients.append([strategy.reduce(tf.distribute.ReduceOp.MEAN, g, axis=None) for g in grads])  # <- GAC104
                    if all_batch_count % batch_acc == 0:  # <- GAC109
                        strategy.run(apply_grad, args=(list_gradients,))
                        list_gradients = []
