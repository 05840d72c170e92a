# Modelled on an early bert4keras GradientAccumulation (a Keras optimizer
# wrapper, public, repository not named by the index): __init__ builds the
# gate `iterations % N == 0` and switches the learning rate and the moment
# decays off between cycles; get_updates sums into K.zeros and hands the
# wrapped optimizer a get_gradients that returns the sums / N, then runs the
# parent's get_updates. That parent advances iterations on every
# micro-batch, so its bias correction counts micro-steps (GAC107, at the
# parent's update: the gate is built in __init__). The gate reads the count
# before the update: true at the first micro-batch (GAC109); and the sums
# restart from zero without the batch that applies (GAC109).
from keras import backend as K


class OptimizerWrapper(object):
    def __init__(self, optimizer, **kwargs):
        self.optimizer = optimizer
        self.iterations = optimizer.iterations
        self.learning_rate = optimizer.learning_rate

    def get_updates(self, loss, params):
        self.updates = self.optimizer.get_updates(loss, params)
        return self.updates


class GradientAccumulation(OptimizerWrapper):
    def __init__(self, optimizer, steps_per_update=1, **kwargs):
        super(GradientAccumulation, self).__init__(optimizer, **kwargs)
        self.steps_per_update = steps_per_update
        self.cond = K.equal(self.iterations % self.steps_per_update, 0)  # <- GAC109
        self.learning_rate = K.switch(self.cond, self.learning_rate, 0.)
        for attr in ["momentum", "rho", "beta_1", "beta_2"]:
            if hasattr(self, attr):
                setattr(self, attr, K.switch(self.cond, getattr(self, attr), 1. - 1e-7))

    def get_gradients(self, loss, params):
        if hasattr(self, "accum_grads"):
            return [ag / self.steps_per_update for ag in self.accum_grads]
        return self.optimizer.get_gradients(loss, params)

    def get_updates(self, loss, params):
        grads = self.get_gradients(loss, params)
        self.accum_grads = [K.zeros(K.int_shape(p), dtype=K.dtype(p)) for p in params]
        accum_updates = [K.update(ag, K.switch(self.cond, ag * 0, ag + g))  # <- GAC109
                         for g, ag in zip(grads, self.accum_grads)]
        self.optimizer.get_gradients = self.get_gradients
        super(GradientAccumulation, self).get_updates(loss, params)  # <- GAC107
        self.updates.extend(accum_updates)
        return self.updates
