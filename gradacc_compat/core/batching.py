"""The effective batch: per-replica batch x replicas x steps.

    gac.effective_batch_size(32, replicas=strategy, steps=4)   # 256 on 2 replicas
    gac.steps_for_effective_batch(256, 32, replicas=2)          # 4

``replicas`` is a number or a strategy (its ``num_replicas_in_sync``).
"""
from __future__ import absolute_import, division, print_function

import numbers

__all__ = ["effective_batch_size", "steps_for_effective_batch"]


def _count(value, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError("`%s` must be an integer >= 1. Received: %s=%r." % (what, what, value))
    return int(value)


def _replicas(replicas):
    count = getattr(replicas, "num_replicas_in_sync", replicas)
    return _count(count, "replicas")


def effective_batch_size(per_replica_batch, replicas=1, steps=1):
    """Examples behind one applied update: ``per_replica_batch * replicas * steps``.

    Args:
      per_replica_batch: examples each replica takes per micro-step.
      replicas: the replica count, or a strategy.
      steps: micro-batches per applied update (the accumulator's ``steps``).
    """
    return _count(per_replica_batch, "per_replica_batch") * _replicas(replicas) * \
        _count(steps, "steps")


def steps_for_effective_batch(effective_batch, per_replica_batch, replicas=1):
    """The ``steps`` that give ``effective_batch`` examples per update.

    Raises:
      ValueError: ``effective_batch`` is not a multiple of
        ``per_replica_batch * replicas`` (saying which batches would fit).
    """
    target = _count(effective_batch, "effective_batch")
    step = _count(per_replica_batch, "per_replica_batch") * _replicas(replicas)
    if target % step:
        below, above = (target // step) * step, (target // step + 1) * step
        nearest = ("%d and %d" % (below, above)) if below else "%d" % above
        raise ValueError(
            "An effective batch of %d does not split into micro-steps of %d examples "
            "(per_replica_batch=%d x replicas=%d). The nearest effective batches are %s."
            % (target, step, per_replica_batch, step // per_replica_batch, nearest))
    return target // step
