# Modelled on chrischancc9008/adam_accumulation (optimizers.py), an
# OptimizerV2 Adam that accumulates in a slot and updates every N calls:
# its bias correction counts cycles (`complete_step`), but the learning
# rate comes from `self._decayed_lr`, whose schedule reads `iterations`,
# which advances on every micro-batch.
import tensorflow as tf
from tensorflow.keras import backend as K


class AdamAccumulation(tf.keras.optimizers.Optimizer):
    def __init__(self, accumulation_steps, learning_rate=0.001, name="Adam", **kwargs):
        super(AdamAccumulation, self).__init__(name, **kwargs)
        self._set_hyper("learning_rate", learning_rate)
        self._set_hyper("accumulation_steps", accumulation_steps)

    def _create_slots(self, var_list):
        for var in var_list:
            self.add_slot(var, "m")
            self.add_slot(var, "accum_grad")

    def _resource_apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        lr_t = self._decayed_lr(dtype)  # <- GAC107
        m = self.get_slot(var, "m")
        accum_grad = self.get_slot(var, "accum_grad")
        accumulation_steps = self._get_hyper("accumulation_steps", dtype)
        local_step = K.cast(self.iterations + 1, dtype)
        complete_step = K.cast((local_step - 1) // accumulation_steps, dtype) + 1
        switch = K.cast(K.equal(local_step // accumulation_steps * accumulation_steps,
                                local_step), K.floatx())
        accum_t = accum_grad + grad
        m_t = 0.9 * m + 0.1 * accum_t / accumulation_steps
        lr_t = lr_t / (1.0 - K.pow(0.9, complete_step))
        K.update(m, (1 - switch) * m + switch * m_t)
        K.update(accum_grad, (1 - switch) * accum_t)
        return K.update(var, var - switch * lr_t * m_t)
