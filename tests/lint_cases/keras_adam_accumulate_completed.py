# Modelled on a widely copied Keras (multi-backend) Adam that accumulates:
# `iterations` counts micro-steps on purpose, and the bias correction and the
# decay read the completed updates, iterations // N. Clean.
from keras import backend as K
from keras.optimizers import Optimizer


class AdamAccumulated(Optimizer):
    def __init__(self, lr=1e-3, accum_iters=4, **kwargs):
        super(AdamAccumulated, self).__init__(**kwargs)
        self.iterations = K.variable(0, dtype="int64")
        self.lr = K.variable(lr)
        self.accum_iters = K.variable(accum_iters, dtype="int64")

    def get_updates(self, loss, params):
        grads = self.get_gradients(loss, params)
        self.updates = [K.update_add(self.iterations, 1)]
        completed = K.cast(self.iterations // self.accum_iters, K.floatx())
        t = completed + 1
        lr_t = self.lr * K.sqrt(1. - K.pow(0.999, t)) / (1. - K.pow(0.9, t))
        apply_now = K.cast(K.equal((self.iterations + 1) % self.accum_iters, 0), K.floatx())
        n = K.cast(self.accum_iters, K.floatx())
        shapes = [K.int_shape(p) for p in params]
        ms, vs, totals = ([K.zeros(s) for s in shapes] for _ in range(3))
        for p, g, m, v, total in zip(params, grads, ms, vs, totals):
            sum_grad = total + g
            mean = sum_grad / n
            m_t = (1 - apply_now) * m + apply_now * (0.9 * m + 0.1 * mean)
            v_t = (1 - apply_now) * v + apply_now * (0.999 * v + 0.001 * K.square(mean))
            step = lr_t * m_t / (K.sqrt(v_t) + 1e-7)
            self.updates.append(K.update(m, m_t))
            self.updates.append(K.update(v, v_t))
            self.updates.append(K.update(total, (1 - apply_now) * sum_grad))
            self.updates.append(K.update(p, p - apply_now * step))
        return self.updates
