"""Compact rows: a cycle's sparse gradient kept as the rows it came with.

An embedding's micro-batch gradient is a ``tf.IndexedSlices`` of R rows out of
a table of V (R a few hundred, V tens of thousands). Where the optimizer
receives the accumulated gradient dense (it updates every row alike: see
``families``), the dense accumulator costs a V-row zero fill on every cycle's
first micro-batch and a V-row divide at the apply. Here each micro-batch's
rows and their indices are instead written into a slot of their own in an
``N x R`` buffer (one scatter each, at the slot count: no index arithmetic
per micro-batch), and the apply makes the dense mean once, with
``unsorted_segment_sum`` of the slots' values divided by the count.

Only :meth:`GradientAccumulator.step` writes slots (one per call, so at most N
before its apply); anything else a compact variable receives -- a dense
gradient, rows of another count, an ``accumulate`` call -- is added to its
ordinary dense accumulator, which a flag marks as holding part of the cycle
("spilled"). The slots, the slot count and the flags are saved with the
accumulator, so a checkpoint restores the pending cycle whole.
"""
from __future__ import absolute_import, division, print_function

from gradacc_compat.compat import tf

__all__ = ["CompactRows", "static_rows"]


def _row_count(grad):
    """The static row count of ``grad`` (``tf.IndexedSlices``), or None."""
    rows = tf.TensorShape(grad.indices.shape)
    if rows.rank != 1:
        return None
    return tf.compat.dimension_value(rows[0])  # None where unknown


def static_rows(grad, variable, steps):
    """R when ``grad`` (``tf.IndexedSlices``) has a static row count that
    keeps ``steps`` slots smaller than ``variable``'s table; else None."""
    shape = tf.TensorShape(variable.shape)
    count = _row_count(grad)
    if (count is None or count < 1 or not shape.is_fully_defined() or shape.rank < 1
            or steps * count >= tf.compat.dimension_value(shape[0])):
        return None
    return count


class CompactRows(object):
    """One variable's slots (``values``, ``indices``) and spill flag.

    Args:
      make: ``make(name, shape, dtype)``, the accumulator's variable factory.
      name: the variable's clean name.
      shape: the variable's static shape; rows: R; steps: N; dtype: the
        accumulator's dtype; index_dtype: the first gradient's (kept, so
        its indices are written without a cast; int64 for a table too
        big for int32).
    """

    def __init__(self, make, name, shape, rows, steps, dtype, index_dtype):
        shape = tf.TensorShape(shape)
        self.rows = rows
        self.table = tf.compat.dimension_value(shape[0])
        if self.table > 2 ** 31 - 1:  # rows past int32's reach: ids of any dtype fit
            index_dtype = tf.int64
        self.values = make("compact/values/" + name, [steps, rows] + shape[1:].as_list(), dtype)
        self.indices = make("compact/indices/" + name, [steps, rows], index_dtype)
        self.spilled = make("compact/spilled/" + name, [], tf.int64)

    def variables(self):
        return [self.values, self.indices, self.spilled]

    def fits(self, grad):
        """Whether ``grad`` fills one slot exactly."""
        return isinstance(grad, tf.IndexedSlices) and _row_count(grad) == self.rows

    def write_slot(self, slot, grad, weight):
        """Slot ``slot`` (the slot count: an int64 tensor of shape [1]) gets
        ``grad``'s rows, or zeros where ``grad`` is None (an unused slot must
        add nothing)."""
        index_dtype = self.indices.dtype.base_dtype
        if grad is None:
            values = tf.zeros(self.values.shape[1:], self.values.dtype.base_dtype)
            indices = tf.zeros([self.rows], index_dtype)
        else:
            values = tf.cast(grad.values, self.values.dtype.base_dtype)
            if weight is not None:
                values = values * tf.cast(weight, values.dtype)
            indices = tf.cast(grad.indices, index_dtype)
        return [self.values.scatter_update(tf.IndexedSlices(tf.expand_dims(values, 0), slot)),
                self.indices.scatter_update(tf.IndexedSlices(tf.expand_dims(indices, 0), slot))]

    def spill(self, write, cond):
        """Adds a gradient to the dense accumulator: ``write(first)`` returns
        the ops, overwriting when ``first``; the cycle's first spill
        overwrites (``cond(pred, true_fn, false_fn)`` picks)."""
        fresh = tf.equal(self.spilled.read_value(), 0)
        done = cond(fresh, lambda: tf.group(*write(True)), lambda: tf.group(*write(False)))
        with tf.control_dependencies([done]):
            return [done, self.spilled.assign(tf.ones([], tf.int64))]

    def gradient(self, slots, accum, scale):
        """The cycle's dense gradient: the first ``slots`` (a scalar) slots
        summed per row after ``scale`` (the divide by the count), plus the
        scaled dense accumulator where something spilled."""
        used = tf.cast(slots, tf.int32)
        values = self.values.read_value()[:used]
        values = scale(tf.reshape(values, [-1] + self.values.shape[2:].as_list()))
        indices = tf.reshape(self.indices.read_value()[:used], [-1])
        summed = tf.math.unsorted_segment_sum(values, indices, self.table)
        spilled = tf.greater(self.spilled.read_value(), 0)
        if tf.executing_eagerly():
            return summed + scale(accum.value()) if bool(spilled) else summed
        return tf.cond(spilled, lambda: summed + scale(accum.read_value()), lambda: summed)
