# Modelled on a loop-unrolled BERT pre-training train-op builder with
# Horovod (Habana's port of BERT's optimization, public, repository
# unknown): the op run on every middle micro-step adds the micro-batch to
# the sums and, when Horovod is on, all-reduces the sums too (sparse or
# dense alike), grouped into that op: one all-reduce per micro-step,
# however the flag and the type test read.
import horovod.tensorflow as hvd
import tensorflow as tf


def add_op(optimizer, loss, steps, reduce_after):
    variables = tf.compat.v1.trainable_variables()
    pairs = optimizer.compute_gradients(loss, variables)
    sums = [tf.compat.v1.get_variable(v.name.split(":")[0] + "/sum", shape=v.shape,
                                      trainable=False) for v in variables]
    sums = [s.assign_add(g) for s, (g, _) in zip(sums, pairs)]
    if reduce_after and hvd.is_initialized():
        sums = [
            hvd.allreduce(tf.convert_to_tensor(s) / steps, op=hvd.Sum)  # <- GAC104
            if isinstance(s, tf.IndexedSlices)
            else hvd.allreduce(s / steps, op=hvd.Sum)
            for s in sums
        ]
    return tf.group(*sums)
