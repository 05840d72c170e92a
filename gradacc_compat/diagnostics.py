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

    def reduce_implementation(self, *args, **kwargs):
        self.calls += 1
        return super(CountingReduction, self).reduce_implementation(*args, **kwargs)

    def batch_reduce_implementation(self, *args, **kwargs):
        self.calls += 1
        return super(CountingReduction, self).batch_reduce_implementation(*args, **kwargs)
