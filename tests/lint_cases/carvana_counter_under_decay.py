# Modelled on LowikC/kaggle_carvana's SGD-with-accumulation (Keras 2
# get_updates): the count the apply gate reads is advanced only inside
# `if self.initial_decay > 0`, so with the default decay it stays 0 and
# the "every N" gate is true on every micro-batch: a gate that always
# fires (GAC109, reported where it tests).
from keras import backend as K
from keras.optimizers import Optimizer


class SGDAccumulate(Optimizer):
    def __init__(self, lr=0.01, momentum=0.9, decay=0., accum_iters=4, **kwargs):
        super(SGDAccumulate, self).__init__(**kwargs)
        self.iterations = K.variable(0., name="iterations")
        self.lr = K.variable(lr)
        self.momentum = K.variable(momentum)
        self.decay = K.variable(decay)
        self.initial_decay = decay
        self.accum_iters = K.variable(accum_iters)

    def get_updates(self, loss, params):
        grads = self.get_gradients(loss, params)
        self.updates = []
        lr = self.lr
        if self.initial_decay > 0:
            lr = lr / (1. + self.decay * self.iterations)
            self.updates.append(K.update_add(self.iterations, 1))
        moments = [K.zeros(K.int_shape(p)) for p in params]
        grads_acc = [K.zeros(K.int_shape(p)) for p in params]
        for p, g, m, acc in zip(params, grads, moments, grads_acc):
            apply_now = K.cast(K.equal(self.iterations % self.accum_iters, 0), K.floatx())  # <- GAC109
            mean = apply_now * (acc + g) / self.accum_iters
            v = self.momentum * m - lr * mean
            self.updates.append(K.update(m, (1 - apply_now) * m + apply_now * v))
            self.updates.append(K.update(acc, (1 - apply_now) * (acc + g)))
            self.updates.append(K.update(p, p + apply_now * v))
        return self.updates
