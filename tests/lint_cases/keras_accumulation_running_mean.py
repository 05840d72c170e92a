# Modelled on keras-gradient-accumulation's optimizer: each gradient is
# divided by N, then kept as a running mean over the micro-steps, so the
# applied value is the sum over N squared.
import tensorflow as tf


class AccumulatingAdam(tf.keras.optimizers.Optimizer):
    def _resource_apply_dense(self, grad, var, apply_state=None):
        sub_step = tf.cast(self.sub_step, var.dtype.base_dtype)
        mean = self.get_slot(var, "g")
        divided = grad / tf.cast(self.accumulation_steps, var.dtype.base_dtype)
        new_mean = tf.where(tf.equal(sub_step, 1), divided,
                            mean + (divided - mean) / sub_step)  # <- GAC108
        return mean.assign(new_mean)
