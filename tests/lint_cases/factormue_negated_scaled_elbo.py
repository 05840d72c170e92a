# Modelled on a FactorMuE variational-inference trainer (edward2, TF2
# eager, public, repo unknown): each sequence's ELBO term is scaled by
# data_size / batch_size, and the loss differentiated is its negation,
# loss = -elbo; the per-sequence gradients summed over the minibatch are
# then the minibatch estimator, applied as they are. Clean.
import tensorflow as tf


def train(model, optimizer, batches, data_size, epochs=2):
    for epoch in range(epochs):
        for x_batch in batches:
            trainable_variables = model.trainable_variables
            accum_gradients = [tf.zeros_like(v) for v in trainable_variables]
            for ix in range(x_batch.shape[0]):
                with tf.GradientTape() as gtape:
                    log_likelihood, kl_local = model(x_batch[ix:ix + 1])
                    elbo = (data_size / x_batch.shape[0]) * (log_likelihood - kl_local)
                    loss = -elbo
                gradients = gtape.gradient(loss, trainable_variables)
                for gi, grad in enumerate(gradients):
                    accum_gradients[gi] += grad
            optimizer.apply_gradients(zip(accum_gradients, trainable_variables))
