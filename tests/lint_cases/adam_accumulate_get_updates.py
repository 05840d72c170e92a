# Modelled on the widely copied Keras 2 "AdamAccumulate" optimizer (met in
# madan-ram/ssd_detectors, crisie/RecurrentGaze, LowikC/kaggle_carvana):
# every update of get_updates runs each micro-batch, so the bias
# correction's t = iterations + 1 counts micro-batches, and the gate
# iterations % N == 0 reads the count before this call's increment.
import numpy as np
from keras import backend as K
from keras.optimizers import Optimizer


class AdamAccumulate(Optimizer):
    def __init__(self, lr=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-8, n_micro=4, **kwargs):
        super(AdamAccumulate, self).__init__(**kwargs)
        self.iterations = K.variable(0)
        self.lr, self.beta_1, self.beta_2 = K.variable(lr), K.variable(beta_1), K.variable(beta_2)
        self.epsilon, self.n_micro = epsilon, K.variable(n_micro)

    def get_updates(self, loss, params):
        grads = self.get_gradients(loss, params)
        self.updates = [(self.iterations, self.iterations + 1)]
        t = self.iterations + 1  # <- GAC107
        lr_t = self.lr * K.sqrt(1. - K.pow(self.beta_2, t)) / (1. - K.pow(self.beta_1, t))
        ms = [K.variable(np.zeros(K.int_shape(p))) for p in params]
        vs = [K.variable(np.zeros(K.int_shape(p))) for p in params]
        sums = [K.variable(np.zeros(K.int_shape(p))) for p in params]
        for p, g, m, v, s in zip(params, grads, ms, vs, sums):
            gate = K.cast(K.equal(self.iterations % self.n_micro, 0), "float32")  # <- GAC109
            mean = (s + gate * g) / self.n_micro
            m_t = self.beta_1 * m + (1. - self.beta_1) * mean
            v_t = self.beta_2 * v + (1. - self.beta_2) * K.square(mean)
            self.updates.append((m, gate * m_t + (1 - gate) * m))
            self.updates.append((v, gate * v_t + (1 - gate) * v))
            self.updates.append((s, (1 - gate) * (s + g)))
            self.updates.append((p, p - gate * lr_t * m_t / (K.sqrt(v_t) + self.epsilon)))
        return self.updates
