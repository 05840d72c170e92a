"""Horovod's ``DistributedOptimizer`` (Keras and ``tf.compat.v1.train``).

Horovod all-reduces where gradients are computed (``compute_gradients``,
``get_gradients``, ``minimize``), every micro-step, and its
``apply_gradients`` applies whatever it is given (Horovod 0.28, TF >= 2.4).
Under accumulation the all-reduce belongs on the accumulated gradient, once
per effective step: this module finds Horovod's own reduction on the
optimizer (its compression, op, process set and local variables kept) and
the optimizer that computes local gradients. Nothing here imports Horovod:
it reads the objects a user hands over.
"""
from __future__ import absolute_import, division, print_function

__all__ = ["is_distributed_optimizer", "rank_reduction", "local_gradients_optimizer"]


def is_distributed_optimizer(optimizer):
    """Whether ``optimizer`` is Horovod's ``DistributedOptimizer``."""
    return getattr(optimizer, "_allreduce_grads", None) is not None and any(
        cls.__module__.split(".")[0] == "horovod" for cls in type(optimizer).__mro__)


def rank_reduction(optimizer):
    """``reduce(grads, variables) -> grads``: Horovod's all-reduce of a
    gradient list as ``optimizer`` runs it, or None when ``optimizer`` is not
    Horovod's. Looked up on the optimizer at each call (a reduction Horovod
    or a test replaces is the one used).

    Raises:
      ValueError: the optimizer accumulates itself
        (``backward_passes_per_step > 1``), or is a ``tf.compat.v1.train``
        one with local variables (``register_local_var``), which only its
        own ``compute_gradients`` keeps out of the all-reduce.
    """
    if not is_distributed_optimizer(optimizer):
        return None
    if getattr(optimizer, "_agg_helper", None) is not None:
        raise ValueError(
            "%s was made with backward_passes_per_step > 1: Horovod would accumulate "
            "as well, and the two would multiply. Use one or the other: "
            "hvd.DistributedOptimizer(optimizer) (backward_passes_per_step=1) with "
            "gradacc_compat's steps=N." % (_describe(optimizer),))
    if hasattr(type(optimizer), "_allreduce"):  # Keras: keeps its local variables local
        return lambda grads, variables: optimizer._allreduce(grads, variables)
    if getattr(optimizer, "_local_vars", None):
        raise ValueError(
            "%s has local variables (register_local_var), which Horovod keeps out of the "
            "all-reduce only in its own compute_gradients, every micro-step. gradacc_compat "
            "all-reduces the accumulated gradient of every variable; drop "
            "register_local_var, or accumulate local gradients yourself."
            % (_describe(optimizer),))
    return lambda grads, variables: optimizer._allreduce_grads(list(grads), list(variables))


def local_gradients_optimizer(optimizer):
    """The optimizer whose ``compute_gradients`` gives this rank's own
    gradients: the one a ``tf.compat.v1.train`` DistributedOptimizer wraps,
    else ``optimizer`` itself."""
    if is_distributed_optimizer(optimizer):
        return getattr(optimizer, "_optimizer", optimizer)
    return optimizer


def _describe(optimizer):
    return "Horovod's DistributedOptimizer (%s.%s)" % (type(optimizer).__module__,
                                                       type(optimizer).__name__)
