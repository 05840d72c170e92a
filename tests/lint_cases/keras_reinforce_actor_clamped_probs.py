# Modelled on a Keras REINFORCE actor (TF1 backend, K.gradients and
# K.function): its loss method clamps the policy's probabilities with
# K.clip(y_pred, 1e-8, 1 - 1e-8) before the log, which clips no gradient;
# each episode's gradients, fetched with the loss by one K.function, are
# added to variables, and learn() applies them every few episodes with no
# division by the number of episodes (GAC101).
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend as K
from tensorflow.keras.optimizers import Adam


class Agent(object):
    def __init__(self, policy, n_actions):
        self.policy, self.n_actions = policy, n_actions
        self.optimizer = Adam(lr=1e-3)
        self.accumulate_grad = [tf.Variable(tf.zeros_like(w), trainable=False)
                                for w in policy.trainable_weights]

    def custom_loss(self, q, y_true, y_pred):
        out = K.clip(y_pred, 1e-8, 1 - 1e-8)
        return K.sum(-y_true * K.log(out) * q)

    def accumulate_gradient(self, states, actions, returns):
        one_hot = np.eye(self.n_actions)[actions]
        loss = self.custom_loss(returns, one_hot, self.policy.output)
        grads = K.gradients(loss, self.policy.trainable_weights)
        iterate = K.function([self.policy.input], [loss, grads])
        loss_value, grads_value = iterate([states])
        self.accumulate_grad = [self.accumulate_grad[i].assign_add(g)
                                for i, g in enumerate(grads_value)]

    def learn(self):
        self.optimizer.apply_gradients(  # <- GAC101
            zip(self.accumulate_grad, self.policy.trainable_weights))
        self.accumulate_grad = [tf.Variable(tf.zeros_like(w), trainable=False)
                                for w in self.policy.trainable_weights]
