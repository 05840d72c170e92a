# Modelled on TensorFlow's own tf.experimental.numpy module
# (np_array_ops.py): diagonal's tf.cond picks zeros when the offset is out
# of bounds, else the array that moveaxis returned; moveaxis is also called
# by the scatter helper with axes computed from a plain count it adds to
# (batch_start += ...). No gradients are summed anywhere: the cond masks no
# sums, no finding.
import tensorflow as tf


def moveaxis(a, source, destination):
    source, destination = list(source), list(destination)
    if source == destination:
        return a
    perm = [i for i in range(len(source)) if i not in source] + source
    return tf.transpose(a, perm)


def scatter_moved(updates, dims, batch_size):
    batch_start = dims[0]
    if batch_start < 0:
        batch_start += len(dims) - batch_size
    return moveaxis(updates, range(batch_start, batch_start + batch_size), range(batch_size))


def diagonal(a, offset):
    a = moveaxis(a, (0, 1), (-2, -1))

    def _zeros():
        return tf.zeros([0], dtype=a.dtype), 0

    a, offset = tf.cond(offset < 0, _zeros, lambda: (a, offset))
    return tf.linalg.diag_part(a, k=offset)
