# Modelled on a TF1 optimizer wrapper for Horovod with iter_size
# accumulation in fp16 (public, repo unknown): a tf.cond on
# global_step % iter_size == 0 applies the sums, else advances
# global_step; the branch that applies calls the inner optimizer without
# global_step (the caller's is swallowed by **kwargs), so once the step
# reaches a multiple of iter_size it stays there and every later step
# applies one micro-batch (and global_step starts at 0: the first already
# does).
import tensorflow as tf


class AccumulatingOptimizer(tf.train.Optimizer):
    def __init__(self, optimizer, iter_size, name="AccumulatingOptimizer"):
        super(AccumulatingOptimizer, self).__init__(False, name)
        self._optimizer = optimizer
        self._iter_size = iter_size
        self._sums = [tf.Variable(tf.zeros_like(v, dtype=tf.float16), trainable=False)
                      for v in tf.trainable_variables()]

    def compute_gradients(self, *args, **kwargs):
        return self._optimizer.compute_gradients(*args, **kwargs)

    def apply_gradients(self, gradvars, *args, **kwargs):
        global_step = tf.train.get_global_step()
        at_boundary = tf.equal(tf.floormod(global_step, self._iter_size), 0)
        pairs, adds = [], []
        for i, (grad, var) in enumerate(gradvars):
            adds.append(tf.assign(self._sums[i], self._sums[i] + tf.cast(grad, tf.float16)))
            pairs.append((self._sums[i], var))

        def update():
            scaled = [(tf.cast(s, tf.float32) / self._iter_size, v) for s, v in pairs]
            done = self._optimizer.apply_gradients(scaled)
            with tf.control_dependencies([done]):
                return tf.group([tf.assign(s, tf.zeros_like(s)) for s in self._sums])

        with tf.control_dependencies([tf.group(adds)]):
            return tf.cond(pred=at_boundary, true_fn=update,  # <- GAC109
                           false_fn=lambda: tf.group(tf.assign_add(global_step, 1)))  # <- GAC109
