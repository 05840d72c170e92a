# Modelled on a blog's Keras 2 SGD that updates every N batches (a
# get_updates of its own, public, repository unknown): its iterations
# count micro-steps, but nothing reads them except the cycle's test and
# the list of weights it saves (no learning-rate decay, no bias
# correction), so counting micro-steps misleads nothing (no GAC107). What
# lint still says: `% N == 0` read before the increment is true at
# iteration 0, and the weights' update is an op made outside the
# K.switch (a tf.cond), which runs whichever way the test goes.
from keras import backend as K
from keras.optimizers import Optimizer


class EveryNSGD(Optimizer):
    def __init__(self, lr=0.01, steps_per_update=1, **kwargs):
        super(EveryNSGD, self).__init__(**kwargs)
        with K.name_scope(self.__class__.__name__):
            self.iterations = K.variable(0, dtype="int64", name="iterations")
            self.lr = K.variable(lr, name="lr")
            self.steps_per_update = steps_per_update

    def get_updates(self, loss, params):
        sums = [K.zeros(K.int_shape(p)) for p in params]
        grads = self.get_gradients(loss, params)
        self.updates = [K.update_add(self.iterations, 1)]
        self.weights = [self.iterations] + sums
        for p, g, s in zip(params, grads, sums):
            moved = p - self.lr * s / float(self.steps_per_update)
            cond = K.equal(self.iterations % self.steps_per_update, 0)  # <- GAC109
            self.updates.append(K.switch(cond, K.update(p, moved), p))  # <- GAC102
            self.updates.append(K.switch(cond, K.update(s, g), K.update(s, s + g)))
        return self.updates
