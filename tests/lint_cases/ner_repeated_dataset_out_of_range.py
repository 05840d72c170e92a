# Modelled on a token-classification trainer under tf.distribute (in the
# style of the transformers-era run_tf_ner script, public, repository
# unknown): the training dataset is repeated without a count in the
# function that makes it (``mode == "train"``), handed through
# ``experimental_distribute_dataset`` and a parameter to the generator
# that reads it, so its ``except tf.errors.OutOfRangeError`` never runs:
# no partial cycle is left when the data ends, because it never ends.
import tensorflow as tf


def make_dataset(records, batch_size, mode):
    dataset = tf.data.TFRecordDataset(records)
    if mode == "train":
        dataset = dataset.repeat()
    return dataset.batch(batch_size), len(records)


def train(strategy, train_dataset, model, optimizer, accumulator, steps, total):
    def accumulate(features, labels):
        with tf.GradientTape() as tape:
            loss = model.loss(labels, model(features, training=True))
        accumulator(tape.gradient(loss, model.trainable_variables))
        return loss

    def apply_sums():
        grads = [g / steps for g in accumulator.gradients]
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        accumulator.reset()

    def micro_batches():
        iterator = iter(train_dataset)

        @tf.function
        def next_one():
            features, labels = next(iterator)
            return strategy.run(accumulate, args=(features, labels))

        while True:
            try:
                yield next_one()
            except tf.errors.OutOfRangeError:
                break

    for i, _ in enumerate(micro_batches()):
        if (i + 1) % steps == 0:
            strategy.run(apply_sums)
        if i + 1 >= total * steps:
            break


def main(strategy, records, model, optimizer, accumulator):
    train_dataset, _ = make_dataset(records, 32, mode="train")
    train_dataset = strategy.experimental_distribute_dataset(train_dataset)
    train(strategy, train_dataset, model, optimizer, accumulator, 4, 1000)
