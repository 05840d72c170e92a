# Modelled on a multi-backend Keras accumulating optimizer (get_updates with
# K.switch gates): the cycle test iterations % N == 0 is true at iteration
# 0, an apply of an empty sum (reported at the test, where it is fixed);
# and the sums start again from zero on the micro-batch that applies,
# without its gradient, so each cycle keeps N - 1 of its micro-batches.
from keras import backend as K


class AccumOptimizer(object):
    def __init__(self, optimizer, steps_per_update):
        self.optimizer = optimizer
        self.steps_per_update = steps_per_update
        self.iterations = K.variable(0, dtype="int64")
        self.cond = K.equal(self.iterations % self.steps_per_update, 0)  # <- GAC109

    def get_updates(self, loss, params):
        self.updates = [K.update_add(self.iterations, 1)]
        self.accum_grads = [K.zeros(K.int_shape(p)) for p in params]
        grads = self.get_gradients(loss, params)
        for g, ag in zip(grads, self.accum_grads):
            self.updates.append(K.update(ag, K.switch(self.cond, ag * 0, ag + g)))  # <- GAC109
        self.updates.extend(self.optimizer.get_updates(loss, params)[1:])
        return self.updates
