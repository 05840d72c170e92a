# Modelled on Oewyn/kaggle_airbus (optimizers.py), a Keras 2 AdamAccumulate:
# the moments are masked by the cycle's flag, but the weights' own update is
# not, so the weights move on every micro-batch with a partial sum (and, as
# in every get_updates of this shape, the gate reads the count before this
# call's update, and the bias correction counts micro-batches).
from keras import backend as K
from keras.optimizers import Optimizer


class AdamAccumulate(Optimizer):
    def __init__(self, lr=0.001, beta_1=0.9, beta_2=0.999, accum_iters=4, **kwargs):
        super(AdamAccumulate, self).__init__(**kwargs)
        self.iterations = K.variable(0, dtype="int64")
        self.lr = K.variable(lr)
        self.beta_1 = K.variable(beta_1)
        self.beta_2 = K.variable(beta_2)
        self.accum_iters = K.variable(accum_iters, dtype="int64")
        self.epsilon = K.epsilon()

    def get_updates(self, loss, params):
        grads = self.get_gradients(loss, params)
        self.updates = [K.update_add(self.iterations, 1)]  # <- GAC107
        t = K.cast(self.iterations, K.floatx())
        lr_t = self.lr * K.sqrt(1. - K.pow(self.beta_2, t)) / (1. - K.pow(self.beta_1, t))
        ms = [K.zeros(K.int_shape(p)) for p in params]
        vs = [K.zeros(K.int_shape(p)) for p in params]
        accs = [K.zeros(K.int_shape(p)) for p in params]
        for p, g, m, v, acc in zip(params, grads, ms, vs, accs):
            flag = K.cast(K.equal(self.iterations % self.accum_iters, 0), K.floatx())  # <- GAC109
            mean = (acc + flag * g) / K.cast(self.accum_iters, K.floatx())
            m_t = self.beta_1 * m + (1. - self.beta_1) * mean
            v_t = self.beta_2 * v + (1. - self.beta_2) * K.square(mean)
            p_t = p - lr_t * m_t / (K.sqrt(v_t) + self.epsilon)
            self.updates.append(K.update(m, flag * m_t + (1 - flag) * m))
            self.updates.append(K.update(v, flag * v_t + (1 - flag) * v))
            self.updates.append(K.update(acc, (1 - flag) * (acc + g)))
            self.updates.append(K.update(p, p_t))  # <- GAC102
        return self.updates
