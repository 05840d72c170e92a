# Modelled on a copy of TensorFlow Addons' GradientAccumulator (in
# terrestrialassemblages/FastGAN-pytorch): a gradient transformer hands the
# optimizer zeros on the steps between applies, on its sparse path and on
# its dense one; the optimizer's update still runs every micro-batch. One
# bug, said once, on the dense path.
import tensorflow as tf


class GradientAccumulator(tf.keras.optimizers.Optimizer):
    def __init__(self, inner_optimizer, accum_steps=4, name="GradientAccumulator", **kwargs):
        super(GradientAccumulator, self).__init__(name, **kwargs)
        self._optimizer = inner_optimizer
        self._accum_steps = accum_steps

        def _accum_grad(grads_and_vars):
            out = []
            for grad, var in grads_and_vars:
                handle = self.get_slot(var, "ga")
                if isinstance(grad, tf.IndexedSlices):
                    handle.scatter_add(grad)

                    def _get_sparse():
                        new_grad = handle.read_value() / self._accum_steps
                        handle.assign(tf.zeros_like(handle))
                        return new_grad

                    dense = tf.cond(self.iterations % self._accum_steps == 0,
                                    _get_sparse, lambda: tf.zeros_like(var))
                    out.append((dense, var))
                else:
                    handle.assign_add(grad)

                    def _get_grad():
                        new_grad = handle.read_value() / self._accum_steps
                        handle.assign(tf.zeros_like(handle))
                        return new_grad

                    new_grad = tf.cond(self.iterations % self._accum_steps == 0,  # <- GAC102
                                       _get_grad, lambda: tf.zeros_like(grad))
                    out.append((new_grad, var))
            return out

        self.gradient_transformers.append(_accum_grad)

    def _create_slots(self, var_list):
        for var in var_list:
            self.add_slot(var, "ga")
