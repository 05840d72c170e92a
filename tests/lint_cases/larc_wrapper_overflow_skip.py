# Modelled on a TF1 large-batch optimizer wrapper for Horovod (public,
# repo unknown): fp16 sums of iter_size micro-batches; when a cycle ends a
# post-processing helper all-reduces them, divides by iter_size times the
# number of ranks, unscales the loss, adds weight decay and applies LARS,
# several hops away from the apply; on an overflow the update is skipped
# and global_step advanced instead (once per cycle either way). The bugs:
# the branch that accumulates advances global_step on every micro-step,
# and global_step % iter_size == 0 holds at step 0, so the first update
# holds one micro-batch.
import tensorflow as tf
import horovod.tensorflow as hvd


class LarsAccumulator(tf.train.Optimizer):
    def __init__(self, optimizer, weight_decay, iter_size=4, name="LarsAccumulator"):
        super(LarsAccumulator, self).__init__(False, name)
        self._optimizer = optimizer
        self._weight_decay = weight_decay
        self._iter_size = iter_size
        self._sums = [tf.Variable(tf.zeros_like(v, dtype=tf.float16), trainable=False)
                      for v in tf.trainable_variables()]

    def apply_gradients(self, gradvars, loss_scale, global_step=None, name=None):
        global_step = tf.train.get_global_step()
        ends_cycle = tf.equal(tf.floormod(global_step, self._iter_size), 0)
        pairs, adds = [], []
        for i, (grad, var) in enumerate(gradvars):
            adds.append(tf.assign(self._sums[i], self._sums[i] + tf.cast(grad, tf.float16)))
            pairs.append((self._sums[i], var))

        def update():
            ready = self._post_process(pairs, loss_scale)
            finite = tf.reduce_all([tf.reduce_all(tf.is_finite(g)) for g, _ in ready])
            skip = tf.logical_not(finite)

            def apply():
                return tf.group(self._optimizer.apply_gradients(ready, global_step=global_step))
            done = tf.cond(skip, lambda: tf.group(tf.assign_add(global_step, 1)), apply)
            with tf.control_dependencies([done]):
                return tf.group([tf.assign(s, tf.zeros_like(s)) for s in self._sums])

        with tf.control_dependencies(adds):
            return tf.cond(ends_cycle, update,  # <- GAC109
                           lambda: tf.group(tf.assign_add(global_step, 1)))  # <- GAC107

    def _post_process(self, pairs, loss_scale):
        summed = hvd.grouped_allreduce([tf.cast(g, tf.float32) for g, _ in pairs], op=hvd.Sum)
        scale = tf.cast(self._iter_size * hvd.size(), tf.float32)
        averaged = [(tf.multiply(summed[i], 1.0 / scale), v) for i, (_, v) in enumerate(pairs)]
        unscaled = []
        for g, v in averaged:
            g = g * loss_scale
            unscaled.append((g, v))
        out = []
        for g, var in unscaled:
            norm = tf.norm(g)
            trust = tf.clip_by_value(0.001 * tf.norm(var) / (norm + 1e-5), 0.001, 50.0)
            g = trust * (g + self._weight_decay * var)
            out.append((g, var))
        return out
