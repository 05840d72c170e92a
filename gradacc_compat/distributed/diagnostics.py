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
    bytes = 0  # one replica's share of what the counted calls reduced
    _depth = 0
    _runs = None  # a variable that each traced or eager call increments
    _min_bytes = 0  # smaller reductions are not counted

    @property
    def runs(self):
        """The reductions run, or None where they cannot be counted (see
        :func:`count_reductions`)."""
        return None if self._runs is None else int(self._runs.numpy())

    def _counted(self, implementation, *args, **kwargs):
        if self._depth == 0:
            size = _payload(args[1:2] or [kwargs[k] for k in (
                "value", "per_replica_value", "value_destination_pairs") if k in kwargs])
            if size >= self._min_bytes:
                self.calls += 1
                self.bytes += size
                if self._runs is not None:
                    # In a tf.function every stateful op of the branch that
                    # runs is run: this add runs each time the traced
                    # reduction does.
                    self._runs.assign_add(1)
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
        counter.bytes   # what one replica sent in them (static shapes only)

    Counts Python-side calls: in eager mode that is one per reduction run; in
    a ``tf.function`` one per reduction traced. It sees what goes through the
    strategy's ``cross_device_ops``: gradient reductions, not the updates of
    CPU-placed mirrored variables, which MirroredStrategy reduces with its
    own ``ReductionToOneDevice``; :func:`count_reductions` sees both.
    """

    def reduce_implementation(self, *args, **kwargs):
        return self._counted(super(CountingReduction, self).reduce_implementation,
                             *args, **kwargs)

    def batch_reduce_implementation(self, *args, **kwargs):
        return self._counted(super(CountingReduction, self).batch_reduce_implementation,
                             *args, **kwargs)


def _payload(args):
    """Bytes of one replica's values in ``args`` (a per-replica value, or
    ``(value, destination)`` pairs): the size of what one replica sends."""
    total = 0
    for arg in args:
        if isinstance(arg, (list, tuple)):
            total += _payload([pair[0] if isinstance(pair, tuple) else pair for pair in arg])
            continue
        parts = getattr(arg, "values", None)
        value = parts[0] if isinstance(parts, (list, tuple)) and parts else arg
        for tensor in ((value.values, value.indices) if isinstance(value, tf.IndexedSlices)
                       else (value,)):
            shape = getattr(tensor, "shape", None)
            if shape is not None and tf.TensorShape(shape).is_fully_defined():
                total += (tf.TensorShape(shape).num_elements()
                          * tf.as_dtype(tensor.dtype).size)
    return total


@contextlib.contextmanager
def count_reductions(strategy, min_bytes=0):
    """Counts the cross-device reductions ``strategy`` runs inside the block,
    with any strategy (MirroredStrategy, MultiWorkerMirrored): the
    strategy's ``reduce_to``/``batch_reduce_to`` (where variable updates
    and optimizers reduce; MirroredStrategy reduces CPU-placed variables
    without its ``cross_device_ops``) and its reduction object's methods
    (replica-context all-reduces) are wrapped for the block's time.

        with count_reductions(strategy) as counter:
            ...train...
        counter.calls, counter.bytes

    Outermost calls only, as ``CountingReduction``. ``counter.calls``
    counts Python calls: eagerly the reductions run, in a ``tf.function``
    the reductions traced. ``counter.runs`` counts the reductions run in
    both (a variable that the traced reduction increments), where the block
    is entered eagerly and outside any ``strategy.scope()``; elsewhere (TF1
    graphs) it is None. ``min_bytes``: count only the reductions that carry
    at least that many bytes per replica -- the model's parameter bytes
    leave out what Keras ``fit`` reduces every step besides the gradients
    (metric results, its step counter).
    """
    try:
        ops = compat.cross_device_ops(strategy)
    except NotImplementedError:  # chosen at first use (TF 1.14 contrib)
        ops = None
    counter = _OutermostCalls()
    counter._min_bytes = min_bytes
    if tf.executing_eagerly() and not tf.distribute.has_strategy():
        counter._runs = tf.Variable(0, dtype=tf.int64, trainable=False, name="reductions_run")
    patched = [(strategy.extended, n) for n in ("reduce_to", "batch_reduce_to")]
    patched += [(ops, n) for n in ("reduce_implementation", "batch_reduce_implementation",
                                   "_all_reduce", "_all_reduce_per_replica_values")
                if ops is not None and hasattr(ops, n)]

    def counted(method):
        return lambda *args, **kwargs: counter._counted(method, *args, **kwargs)

    for owner, name in patched:
        setattr(owner, name, counted(getattr(owner, name)))
    try:
        yield counter
    finally:
        for owner, name in patched:
            delattr(owner, name)  # back to the class's method
