# Modelled on a card-game actor-critic trainer (TF2, public, repo unknown):
# the loss helper returns a tuple whose first item is a sum over the
# examples (-reduce_sum(log p * reward)), read as `metrics[0]`; the
# gradients of the batches summed and applied once are then the whole
# data's gradient, as one batch of all of it would give. Clean.
import tensorflow as tf


def compute_loss(logits, actions, rewards):
    logsoftmax = tf.nn.log_softmax(logits) * tf.one_hot(actions, tf.shape(logits)[-1])
    loss = -tf.reduce_sum(logsoftmax * rewards[:, None])
    entropy = tf.reduce_mean(tf.nn.softmax(logits))
    return loss, entropy


def train(model, optimizer, data, epochs, batch_size=64):
    grads_acc = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]

    @tf.function
    def train_step(xs, actions, rewards):
        for x, a, r in tf.data.Dataset.from_tensor_slices((xs, actions, rewards)).batch(batch_size):
            with tf.GradientTape() as tape:
                metrics = compute_loss(model(x, training=True), a, r)
            loss = metrics[0]
            grads = tape.gradient(loss, model.trainable_variables)
            for i in range(len(grads_acc)):
                grads_acc[i].assign_add(grads[i])

    for epoch in range(epochs):
        for acc in grads_acc:
            acc.assign(tf.zeros_like(acc))
        for xs, actions, rewards in data:
            train_step(xs, actions, rewards)
        optimizer.apply_gradients(zip(grads_acc, model.trainable_variables))
