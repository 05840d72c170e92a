# Modelled on IndicoDataSolutions/finetune's gradient-accumulation optimizer
# factory (TF1): the (sum, variable) pairs are appended one by one to a list
# that the base optimizer's apply_gradients receives; nothing divides them.
import tensorflow as tf


def accumulating(base_class, n_micro):
    class Accumulating(base_class):
        def apply_gradients(self, grads_and_vars, global_step=None, name=None):
            adds, sums, pairs = [], [], []
            for grad, var in grads_and_vars:
                if grad is None:
                    continue
                total = tf.get_variable(var.op.name + "/total", shape=var.shape,
                                        initializer=tf.zeros_initializer(), trainable=False)
                adds.append(total.assign_add(grad))
                sums.append(total)
                pairs.append((total, var))
            step = global_step if global_step is not None else tf.train.get_or_create_global_step()

            def update():
                applied = super(Accumulating, self).apply_gradients(pairs, global_step=step)  # <- GAC101
                with tf.control_dependencies([applied]):
                    return tf.group(*[s.assign(tf.zeros_like(s)) for s in sums])

            with tf.control_dependencies(adds):
                return tf.cond(tf.equal(step % n_micro, n_micro - 1), update,
                               lambda: tf.group(step.assign_add(1)))
    return Accumulating
