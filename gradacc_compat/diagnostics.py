"""Tools to check the communication contract in your own setup."""
from __future__ import absolute_import, division, print_function

import contextlib

from gradacc_compat import compat
from gradacc_compat.compat import tf

__all__ = ["CountingReduction", "count_reductions"]


class _OutermostCalls(object):
    """Counts calls, outermost only: some TF versions implement a batch
    reduction as one reduce_implementation call per value."""

    calls = 0
    _depth = 0

    def _counted(self, implementation, *args, **kwargs):
        if self._depth == 0:
            self.calls += 1
        self._depth += 1
        try:
            return implementation(*args, **kwargs)
        finally:
            self._depth -= 1


class CountingReduction(_OutermostCalls, tf.distribute.ReductionToOneDevice):
    """A ``ReductionToOneDevice`` that counts the reductions it is asked for.

    Usage::

        counter = CountingReduction()
        strategy = tf.distribute.MirroredStrategy(devices, cross_device_ops=counter)
        ... train N micro-steps eagerly ...
        counter.calls   # one gradient reduction per EFFECTIVE step with gac

    Counts Python-side calls: in eager mode that is one per reduction run; in
    a ``tf.function`` one per reduction traced.
    """

    def reduce_implementation(self, *args, **kwargs):
        return self._counted(super(CountingReduction, self).reduce_implementation,
                             *args, **kwargs)

    def batch_reduce_implementation(self, *args, **kwargs):
        return self._counted(super(CountingReduction, self).batch_reduce_implementation,
                             *args, **kwargs)


@contextlib.contextmanager
def count_reductions(strategy):
    """Counts the cross-device reductions ``strategy`` runs inside the block,
    for strategies that take no ``cross_device_ops`` (MultiWorkerMirrored):
    its own reduction object's methods are wrapped for the block's time.

        with count_reductions(strategy) as counter:
            ...train...
        counter.calls

    Outermost calls only, as ``CountingReduction``.
    """
    ops = compat.cross_device_ops(strategy)
    counter = _OutermostCalls()
    names = [n for n in ("reduce_implementation", "batch_reduce_implementation",
                         "_all_reduce", "_all_reduce_per_replica_values")
             if hasattr(ops, n)]

    def counted(method):
        return lambda *args, **kwargs: counter._counted(method, *args, **kwargs)

    for name in names:
        setattr(ops, name, counted(getattr(ops, name)))
    try:
        yield counter
    finally:
        for name in names:
            delattr(ops, name)  # back to the class's method
