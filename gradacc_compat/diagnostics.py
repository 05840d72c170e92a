"""Tools to check the communication contract in your own setup."""
from __future__ import absolute_import, division, print_function

from gradacc_compat.compat import tf

__all__ = ["CountingReduction"]


class CountingReduction(tf.distribute.ReductionToOneDevice):
    """A ``ReductionToOneDevice`` that counts the reductions it is asked for.

    Usage::

        counter = CountingReduction()
        strategy = tf.distribute.MirroredStrategy(devices, cross_device_ops=counter)
        ... train N micro-steps eagerly ...
        counter.calls   # one gradient reduction per EFFECTIVE step with gac

    Counts Python-side calls: in eager mode that is one per reduction run; in
    a ``tf.function`` one per reduction traced.
    """

    def __init__(self):
        super(CountingReduction, self).__init__()
        self.calls = 0
        self._depth = 0

    def _counted(self, implementation, *args, **kwargs):
        # Only outermost calls count: some TF versions implement a batch
        # reduction as one reduce_implementation call per value.
        if self._depth == 0:
            self.calls += 1
        self._depth += 1
        try:
            return implementation(*args, **kwargs)
        finally:
            self._depth -= 1

    def reduce_implementation(self, *args, **kwargs):
        return self._counted(super(CountingReduction, self).reduce_implementation,
                             *args, **kwargs)

    def batch_reduce_implementation(self, *args, **kwargs):
        return self._counted(super(CountingReduction, self).batch_reduce_implementation,
                             *args, **kwargs)
