# Modelled on a compositional-learning CNN trainer's eager loop (TF1 with
# eager execution, public, repo unknown): the training dataset is made by an
# input function that calls dataset.repeat(), so the loop over it never
# ends and no last partial cycle is lost when it does; the same loop over
# a dataset made without repeat() ends, and drops what the last cycle held.
import tensorflow as tf


def input_fn(inputs, labels, is_train):
    dataset = tf.data.Dataset.from_tensor_slices((inputs, labels))
    if is_train:
        dataset = dataset.repeat()
        dataset = dataset.shuffle(1000)
    return dataset.batch(8), len(inputs)


def train_endless(model, optimizer, inputs, labels, accumulation_steps=4):
    train_dataset, num_train = input_fn(inputs, labels, is_train=True)
    sums = []
    for step, (x, y) in enumerate(train_dataset):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        sums = grads if not sums else [s + g for s, g in zip(sums, grads)]
        if (step + 1) % accumulation_steps == 0:
            optimizer.apply_gradients(
                [(s / accumulation_steps, v) for s, v in zip(sums, model.trainable_variables)])
            sums = []


def train_once(model, optimizer, inputs, labels, accumulation_steps=4):
    val_dataset, num_val = input_fn(inputs, labels, is_train=False)
    sums = []
    for step, (x, y) in enumerate(val_dataset):  # <- GAC110
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        sums = grads if not sums else [s + g for s, g in zip(sums, grads)]
        if (step + 1) % accumulation_steps == 0:
            optimizer.apply_gradients(
                [(s / accumulation_steps, v) for s, v in zip(sums, model.trainable_variables)])
            sums = []
