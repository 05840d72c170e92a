# Modelled on a public GPT-2 question-answering fine-tune (TF2 eager; its
# repository could not be pinned, search-index read id 21642838580): the
# gradients of a mean loss are summed over 24 micro-batches and applied
# undivided (GAC101), and the counter outlives each epoch (GAC110); the
# only division of a loss in the file is the epoch's average for the
# report, which scales nothing. weighted_step (modelled on
# yuke93/RL-Restore's agent) adds each gradient times a fed fraction, so
# the sum is a mean: clean.
import tensorflow as tf

loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def train(model, optimizer, dataset, num_epochs, batch_size):
    sums = [tf.zeros_like(v) for v in model.trainable_variables]
    counter = 0
    for epoch in range(num_epochs):  # <- GAC110
        epoch_loss, num_batches = 0.0, 0
        for inputs, labels in dataset.batch(batch_size):
            with tf.GradientTape() as tape:
                current_loss = loss(labels, model(inputs).logits)
            grads = tape.gradient(current_loss, model.trainable_variables)
            sums = [s + g for s, g in zip(sums, grads)]
            counter += 1
            if counter == 24:
                optimizer.apply_gradients(zip(sums, model.trainable_variables))  # <- GAC101
                sums = [tf.zeros_like(v) for v in model.trainable_variables]
                counter = 0
            epoch_loss += current_loss
            num_batches += 1
        average_loss = epoch_loss / num_batches
        print("epoch %d loss %.4f" % (epoch + 1, average_loss))


def weighted_step(opt, loss_t, tvs):
    accum_vars = [tf.Variable(tf.zeros_like(tv.initialized_value()), trainable=False) for tv in tvs]
    zero_ops = [tv.assign(tf.zeros_like(tv)) for tv in accum_vars]
    gvs = opt.compute_gradients(loss_t, tvs)
    accum_weight = tf.compat.v1.placeholder(tf.float32, shape=[])
    accum_ops = [accum_vars[i].assign_add(gv[0] * accum_weight) for i, gv in enumerate(gvs)]
    train_step = opt.apply_gradients([(accum_vars[i], gv[1]) for i, gv in enumerate(gvs)])
    return zero_ops, accum_ops, accum_weight, train_step
