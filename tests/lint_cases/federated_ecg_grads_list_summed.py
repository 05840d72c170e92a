# Modelled on a federated ECG training helper (Keras, TF2 eager): each
# hospital returns one batch's gradients, the central distributor keeps
# them in a list (update_grads_list) and apply_grads applies their sum,
# element by element, then empties the list. The hospitals' losses are
# means; nothing divides by the number of gradients collected: the step is
# that many times the big batch's (GAC101). The weight-averaging path
# beside it divides.
import numpy as np
import tensorflow as tf


class CentralModelDistributor(object):
    def __init__(self, model):
        self.model = model
        self.optimizer = tf.keras.optimizers.Adam(1e-3)
        self.weights_list = []
        self.grads_list = []

    def update_weight_list(self, new_weights):
        self.weights_list.append(new_weights)

    def return_avg_weights(self):
        avg = [np.mean(np.array(w), axis=0) for w in zip(*self.weights_list)]
        self.weights_list = []
        return avg

    def update_grads_list(self, new_grads):
        self.grads_list.append(new_grads)

    def apply_grads(self):
        summed_grads = [sum(g) for g in zip(*self.grads_list)]
        self.optimizer.apply_gradients(  # <- GAC101
            zip(summed_grads, self.model.trainable_variables))
        self.grads_list = []
