"""An effective step, as functions of the accumulator's
:class:`~gradacc_compat.core.accumulator_state.Cycle`: the decision (eagerly
on the host, else in cross-replica context, ``merge_call`` + ``tf.cond``),
the presence of each variable in the cycle, non-finite cycles, the apply."""
from __future__ import absolute_import, division, print_function

from gradacc_compat import compat
from gradacc_compat.core import audit
from gradacc_compat.core.accumulator_checks import check_strategy
from gradacc_compat.core.accumulator_writes import sparse_apply
from gradacc_compat.core.checks import names
from gradacc_compat.compat import tf
from gradacc_compat.core.accumulator_ops import (MAX_GUARDED as _MAX_GUARDED,
                                                 MIXED_NONE as _MIXED_NONE, cond as _cond,
                                                 is_default as _is_default, is_python as _is_python,
                                                 local_sum as _local_sum, read as _read,
                                                 total as _total, transformed as _transformed)

__all__ = ["apply_if"]


def apply_if(cycle, adapter, optimizer, count, predicate, apply_fn=None, reduce=None,
             guarded=()):
    """Decides in cross-replica context, applies back in replica context.

    A ``tf.cond`` around ``apply_gradients`` in replica context fails
    under MirroredStrategy (the optimizer's ``merge_call`` inside the
    cond), so the decision is taken after ``merge_call``, and the apply
    re-enters replica context with ``call_for_each_replica``.
    """
    check_strategy(cycle.plain, "apply")
    variables = cycle.plain.variables
    if not variables:
        raise ValueError("Nothing to apply: accumulate() has not been called yet.")
    if not cycle.plain.seen:
        raise ValueError("Every gradient passed so far was None; there is nothing "
                         "to apply. Check that the loss depends on the variables.")
    if adapter.works_in_graph is False and not compat.eager_by_default():
        raise TypeError(
            "%s optimizers do not update variables in a TF1 graph/Session (they "
            "silently do nothing there). Use a tf.compat.v1.train optimizer or a "
            "tf.keras.optimizers.legacy one in graph code, or run eagerly / in "
            "tf.function." % (adapter.name,))

    def decide(strategy, count_value=None):
        if count_value is None:
            count_value = cycle.micro_step.read_value()
        else:
            # Every replica's count: in a graph the predicate (and with it
            # the apply) must wait for every replica's accumulation.
            counts = compat.local_results(strategy, count_value)
            with tf.control_dependencies(counts[1:]):
                count_value = tf.identity(counts[0])
        applies = predicate(count_value)
        if tf.executing_eagerly() and not bool(applies):
            return tf.constant(False)  # nothing to prepare for
        if not (tf.executing_eagerly() and _is_default(strategy)):
            # Optimizer state is created here, outside the cond (and in
            # cross-replica context); an eager apply creates its own.
            used = [variables[i] for i in sorted(cycle.plain.seen)]
            with tf.init_scope(), compat.strategy_scope(strategy), \
                    compat.direct_variables():
                adapter.prepare(optimizer, used)
        with _apply_placement(cycle):
            applied = _cond(applies,
                            lambda: _apply_present(cycle, strategy, adapter, optimizer,
                                                   apply_fn, reduce, guarded))
        if not tf.executing_eagerly() and _is_default(strategy):
            compat.run_as_call(applied)  # the untaken apply: one call, not ~100 dead ops
        return applied

    ctx = tf.distribute.get_replica_context()
    if ctx is None:
        return decide(cycle.plain.strategy)
    if count is None:
        count = cycle.local(cycle.micro_step).read_value()
    return ctx.merge_call(decide, args=(count,))


def _apply_present(cycle, strategy, adapter, optimizer, apply_fn, reduce, guarded):
    """Cross-replica: the apply of the variables that got a gradient in
    this cycle, as Keras skips a None gradient (the others, and their
    slots, are left alone). Eagerly the flags are read; in a graph the
    variables in ``guarded`` (those that may have got none) are decided
    by ``tf.cond`` on their flags, one branch per possible subset (up to
    ``_MAX_GUARDED`` of them; beyond, all or none)."""
    def apply_now():
        return _apply_present_now(cycle, strategy, adapter, optimizer, apply_fn, reduce,
                                  guarded)

    def apply_finite():  # nonfinite="skip": a cycle with inf/NaN is dropped
        return _cond(_all_finite(cycle, strategy), apply_now,
                     lambda: _drop_cycle(cycle, strategy, skipped=True))

    apply = apply_finite if cycle.nonfinite == "skip" else apply_now
    if cycle.plain.weighted and cycle.reduction == "mean":
        # A cycle whose weights are all zero holds no example: nothing
        # to apply (a zero gradient would still move Adam's weights).
        return _cond(tf.greater(_total(strategy, cycle.weight_total), 0.0), apply,
                     lambda: _drop_cycle(cycle, strategy, skipped=False))
    return apply()


def _all_finite(cycle, strategy):
    """Whether every replica's pending sums are finite: each component
    read where it is (no collective), one answer for all replicas."""
    if compat.spans_workers(strategy):
        # Each worker sees its own replicas only: workers could decide
        # differently, and one would wait in the apply's all-reduce.
        raise NotImplementedError(
            'GradientAccumulator(nonfinite="skip") under %s across workers: each worker '
            'sees only its own replicas\' gradients, so they could disagree about a '
            'cycle. Use nonfinite="raise" (or "apply", or a LossScaleOptimizer, which '
            'agrees across workers).' % type(strategy).__name__)
    parts = []
    for i in sorted(cycle.plain.seen):
        for accum in compat.local_results(strategy, cycle.accums[i]):
            parts.append(tf.reduce_all(tf.math.is_finite(_read(accum))))
        if i in cycle.plain.compact:
            values = cycle.plain.compact[i].values
            parts.append(tf.reduce_all(tf.math.is_finite(_read(values))))
    return tf.reduce_all(tf.stack(parts))


def _drop_cycle(cycle, strategy, skipped):
    """The cycle's counters reset on every replica, nothing applied;
    with ``skipped`` (``nonfinite="skip"``) one more skipped cycle."""
    def replica_drop():
        resets = cycle.reset_ops(lambda v: (cycle.local(v),))
        if skipped:
            resets.append(cycle.local(cycle.skipped).assign_add(1))
        return tf.group(*resets)
    result = strategy.extended.call_for_each_replica(replica_drop)
    return tf.group(*compat.local_results(strategy, result))


def _apply_present_now(cycle, strategy, adapter, optimizer, apply_fn, reduce, guarded):
    seen = sorted(cycle.plain.seen)
    if tf.executing_eagerly():
        flags = _local_sum(strategy, cycle.present).numpy()
        return _apply_all(cycle, strategy, adapter, optimizer, apply_fn, reduce,
                          [i for i in seen if flags[i] > 0])
    guarded = [i for i in guarded if i in cycle.plain.seen]
    always = [i for i in seen if i not in guarded]
    if not guarded:  # every variable had a gradient: no flag to read
        return _apply_all(cycle, strategy, adapter, optimizer, apply_fn, reduce, always)
    # Each replica's flags, read where they are: an aggregated read of
    # the variable would be one more all-reduce per effective step.
    present = _local_sum(strategy, cycle.present)
    flags = [tf.greater(present[i], 0.0) for i in guarded]

    def apply(chosen):
        return _apply_all(cycle, strategy, adapter, optimizer, apply_fn, reduce,
                          sorted(always + chosen))

    if len(guarded) > _MAX_GUARDED:
        audit.warn_once(cycle.plain, "guarded", _MIXED_NONE % (
            len(guarded), _MAX_GUARDED, names([cycle.plain.variables[i] for i in guarded]),
            _MAX_GUARDED))
        return _cond(tf.reduce_any(flags), lambda: apply(guarded), lambda: apply([]))

    def branch(j, chosen):
        if j == len(guarded):
            return apply(chosen)
        return _cond(flags[j], lambda: branch(j + 1, chosen + [guarded[j]]),
                     lambda: branch(j + 1, chosen))
    return branch(0, [])


def _apply_placement(cycle):
    """Where the apply's ``tf.cond`` goes. Between-graph replication (the
    accumulator on a cluster task, under a ``replica_device_setter``) in
    TF2 control flow: on no device, so that colocation places the
    branch's ops. A TF2 cond is a function call; when TF inlines it,
    the body's ops take the call's device (this worker's) beside the
    optimizer's colocation with its variables on the ps, which TF
    2.4-2.11 refuse without soft placement ("Cannot colocate nodes ...
    incompatible jobs"). Elsewhere the scope stays (a replica's device).
    """
    if cycle.plain.device is None or compat.TF1 or tf.executing_eagerly():
        return compat.nullcontext()
    return tf.compat.v1.device(None)


def _apply_all(cycle, strategy, adapter, optimizer, apply_fn=None, reduce=None,
               indices=None):
    """Cross-replica: one apply per replica (of the variables at
    ``indices``; nothing where none), then the resets. ``reduce``
    (Horovod's, see ``horovod_support``): the one all-reduce across
    ranks, of the accumulated gradient."""
    divisor = None
    if cycle.reduction == "mean" and cycle.plain.weighted:
        # The replica-local totals summed, divided by the replica count:
        # weight=None counts 1 per call, so equal weights give the same
        # update as no weights.
        divisor = (_total(strategy, cycle.weight_total)
                   / float(strategy.num_replicas_in_sync))
    if indices is None:
        indices = sorted(cycle.plain.seen)
    variables = cycle.plain.variables

    def replica_apply():
        div = divisor
        if cycle.reduction == "mean" and div is None:
            div = tf.cast(cycle.local(cycle.micro_step).read_value(), tf.float32)
        grads = []
        accums = cycle.local_list(cycle.accums)
        divisors = {}  # the divisor in each accumulator dtype, cast once

        def scale(value):
            if div is None:
                return value
            if value.dtype not in divisors:
                divisors[value.dtype] = tf.cast(div, value.dtype)
            return tf.math.divide_no_nan(value, divisors[value.dtype])

        compact = cycle.plain.compact
        slots = cycle.plain.slots.read_value()[0] if compact else None
        for i in indices:
            accum = accums[i]
            rows = None
            if i in compact:
                value = compact[i].gradient(slots, accum, scale)
            elif sparse_apply(cycle, i, adapter, strategy):
                # The rows the cycle touched, as the big batch's
                # IndexedSlices has them: optimizers that update only the
                # rows present (Momentum, Ftrl, Adagrad...) stay exact.
                mark = cycle.local(cycle.rows[str(i)]).read_value()
                rows = tf.reshape(tf.where(mark > 0), [-1])
                value = tf.gather(accum, rows)  # reads those rows only
            else:
                value = _read(accum)
            if i not in cycle.plain.maximum and i not in compact:
                value = scale(value)
            dtype = tf.as_dtype(variables[i].dtype).base_dtype  # Keras 3: a string
            if value.dtype != dtype:
                value = tf.cast(value, dtype)
            if rows is not None:
                value = tf.IndexedSlices(value, rows,
                                         dense_shape=tf.shape(accum, out_type=tf.int64))
            grads.append(value)
        applied_vars = [variables[i] for i in indices]
        if reduce is not None:
            grads = list(reduce(grads, applied_vars))
        if cycle.transform is not None and grads:
            grads = _transformed(cycle.transform, grads, applied_vars,
                                 strategy.num_replicas_in_sync)
        grads_and_vars = list(zip(grads, applied_vars))
        if not grads_and_vars:  # no variable got a gradient this cycle
            applied = None
        else:
            with adapter.applying(optimizer):
                applied = (apply_fn(grads_and_vars) if apply_fn is not None
                           else adapter.apply(optimizer, grads_and_vars))
        deps = [t for t in [applied] + grads if t is not None and not _is_python(t)]
        deps = [t.values if isinstance(t, tf.IndexedSlices) else t for t in deps]
        with tf.control_dependencies(deps if not tf.executing_eagerly() else []):
            resets = cycle.reset_ops(lambda v: (cycle.local(v),))
            resets.append(cycle.local(cycle.iterations).assign_add(1))
        return tf.group(*resets)

    result = strategy.extended.call_for_each_replica(replica_apply)
    return tf.group(*compat.local_results(strategy, result))
