# Modelled on a road-segmentation Keras model with sharpness-aware
# minimization (TF2, public, repo unknown): a helper averages the
# gradients of each example of the batch in variables it zeroes first,
# the step moves the model's own weights by assign_add to the sharp
# point and back by assign_sub, then applies the averaged gradients once
# per batch. Moving the weights is no accumulation, and the helper's
# loop over the examples is the batch itself. Clean.
import tensorflow as tf


class SegmentationSAM(tf.keras.Model):
    def __init__(self, net, rho=0.05):
        super(SegmentationSAM, self).__init__()
        self.net = net
        self.rho = rho
        self.sums = [tf.Variable(tf.zeros_like(w), trainable=False)
                     for w in self.net.trainable_variables]

    @tf.function
    def mean_gradients(self, images, masks):
        for s in self.sums:
            s.assign(tf.zeros_like(s))
        count = 0.
        for image, mask in zip(tf.unstack(images), tf.unstack(masks)):
            count += 1.
            with tf.GradientTape() as tape:
                loss = self.compiled_loss(mask, self.net(image[None]))
            grads = tape.gradient(loss, self.net.trainable_variables)
            for g, s in zip(grads, self.sums):
                s.assign_add(g)
        for s in self.sums:
            s.assign(s / count)
        return self.sums

    def train_step(self, data):
        images, masks = data
        first = self.mean_gradients(images, masks)
        norm = tf.linalg.global_norm(first)
        moved = []
        for g, w in zip(first, self.net.trainable_variables):
            step = g * (self.rho / (norm + 1e-12))
            w.assign_add(step)
            moved.append(step)
        sharp = self.mean_gradients(images, masks)
        for w, step in zip(self.net.trainable_variables, moved):
            w.assign_sub(step)
        self.optimizer.apply_gradients(zip(sharp, self.net.trainable_variables))
        return {}
