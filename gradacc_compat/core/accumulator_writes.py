"""What a micro-step writes, as functions of the accumulator's
:class:`~gradacc_compat.core.accumulator_state.Cycle`: building the
accumulators, row marks of sparse variables, compact rows, presence flags,
and the read of what is pending."""
from __future__ import absolute_import, division, print_function

from gradacc_compat import compat
from gradacc_compat.core import audit, compact_rows, families
from gradacc_compat.core.accumulator_checks import check_inputs
from gradacc_compat.core.checks import clean_name
from gradacc_compat.compat import tf
from gradacc_compat.core.accumulator_state import AGG as _AGG, once_per_strategy
from gradacc_compat.core.accumulator_ops import (accum_dtype as _accum_dtype, clear as _clear,
                                                 cond as _cond, gated as _gated,
                                                 is_default as _is_default, read as _read,
                                                 scatter as _scatter, where as _where)

__all__ = ["build", "accumulate", "rows_as_dense", "sparse_apply", "pending"]


def build(cycle, variables, sparse=()):
    """Creates the accumulators (once, whichever replica asks first) and the
    row marks of the variables at positions ``sparse``."""
    if cycle.accums is None:
        plain = cycle.plain
        strategy = plain.strategy
        audit.first_use(plain, variables, cycle.steps, strategy)

        def make():
            if plain.variables is None:
                with tf.init_scope(), compat.strategy_scope(strategy):
                    plain.accums = [
                        plain.variable("accum/" + clean_name(v), tf.TensorShape(v.shape),
                                       _accum_dtype(v), _AGG.SUM)
                        for v in variables]
                    # 1 where a variable got a gradient this cycle (set by
                    # each micro-step; ones where a checkpoint has none).
                    plain.present = plain.variable("present", [len(variables)],
                                                   tf.float32, _AGG.SUM, fill=1)
                plain.variables = list(variables)
                plain.maximum = set(i for i, v in enumerate(variables)
                                    if families.overwritten_by_gradient(v))
            # Tracked here, in cross-replica context: a checkpoint restore
            # waiting for them then assigns every replica's component.
            cycle.adopt(plain.accums)
            return plain.accums

        cycle.adopt(once_per_strategy(make))  # other replicas' objects
    track_rows(cycle, sparse)


def track_rows(cycle, indices):
    """Row marks for the variables at ``indices``: one float per row of the
    variable, set where a cycle's sparse gradients touched it, and wherever
    its accumulator may hold anything else (every row, once a dense gradient
    was added): a cycle's first micro-batch clears only the marked rows.
    Created on a variable's first sparse gradient (and, for a model loaded
    mid-cycle, when the optimizer is rebuilt)."""
    missing = [i for i in indices if str(i) not in cycle.rows]
    if not missing:
        return
    plain = cycle.plain
    variables = plain.variables

    def make():
        marks = getattr(plain, "rows", None)
        if marks is None:
            marks = plain.rows = {}
        with tf.init_scope(), compat.strategy_scope(plain.strategy):
            for i in missing:
                if i not in marks:
                    rows = tf.TensorShape(variables[i].shape)[:1]
                    marks[i] = plain.variable("rows/" + clean_name(variables[i]), rows,
                                              tf.float32, _AGG.SUM,
                                              fill=1 if i in plain.dense else 0)
        cycle.adopt_rows(marks)  # in cross-replica context, as in build
        return dict(marks)

    cycle.adopt_rows(once_per_strategy(make))  # other replicas' objects


def rows_as_dense(cycle, adapter, optimizer, reduce):
    """Whether ``optimizer`` may receive this accumulator's sparse gradients
    dense: its update of a ``tf.IndexedSlices`` equals its dense update (the
    family says which do), and the apply stays in this process -- one
    device, no cluster task, no ``reduce`` across processes (Horovod's) --
    where a dense gradient would make an all-reduce or a parameter server
    carry the whole table instead of its rows. Such a variable keeps no row
    marks: a cycle's first micro-batch writes its accumulator whole, as a
    dense gradient's does, and the apply reads it whole (no gather, no
    ``tf.where`` over the marks)."""
    plain = cycle.plain
    return (adapter.updates_every_row(optimizer) and _is_default(plain.strategy)
            and plain.device is None and reduce is None)


def sparse_apply(cycle, i, adapter, strategy):
    """Whether variable ``i`` is applied as ``tf.IndexedSlices`` over the rows
    its cycle touched: every gradient it ever received was sparse, and the
    optimizer sums the rows that the replicas' all-reduce repeats (else
    dense is the exact apply: see the family adapter)."""
    return (str(i) in cycle.rows and i not in cycle.plain.dense
            and (adapter.sums_duplicate_rows or strategy.num_replicas_in_sync == 1))


@compat.do_not_convert
def accumulate(cycle, gradients, variables, weight, dense=False, slots=False):
    """Adds one micro-batch. Returns ``(count, known)``: the new pending count
    as a tensor, and eagerly as a Python int (else None). ``dense``: the
    sparse gradients of variables without row marks are accumulated as
    dense ones (see :func:`rows_as_dense`). ``slots``: this call writes a
    slot of the compact rows, made here for the variables whose first
    gradient this is."""
    gradients, variables, weight, checks = check_inputs(cycle.plain, cycle.nonfinite,
                                                        gradients, variables, weight)
    if checks:
        # Every write consumes a gated value (a control input on the
        # writes' cond alone does not hold them back inside a function).
        with tf.control_dependencies(checks):
            gradients = [_gated(g) for g in gradients]
            weight = None if weight is None else tf.identity(weight)
            return _accumulate_checked(cycle, gradients, variables, weight, dense, slots)
    return _accumulate_checked(cycle, gradients, variables, weight, dense, slots)


def _accumulate_checked(cycle, gradients, variables, weight, dense, slots):
    build(cycle, variables)
    plain = cycle.plain
    if slots:
        _make_compact(cycle, gradients)
    sparse = [i for i, g in enumerate(gradients)
              if isinstance(g, tf.IndexedSlices) and i not in plain.compact]
    if dense:
        plain.dense.update(i for i in sparse if str(i) not in cycle.rows)
    else:
        track_rows(cycle, sparse)
    for i, grad in enumerate(gradients):
        if grad is None:
            plain.ever_none.add(i)
            continue
        plain.seen.add(i)
        if not isinstance(grad, tf.IndexedSlices):
            plain.dense.add(i)
    if weight is not None:
        plain.weighted = True
    micro = cycle.local(cycle.micro_step)
    one = tf.constant(1.0) if weight is None else weight

    def writes(first):
        return _writes(cycle, gradients, weight, first) + _present_writes(cycle, gradients,
                                                                          first)

    if tf.executing_eagerly():
        # The host knows which micro-batch this is: no branch, no ops that
        # only pick one, and the counters go straight to the kernels.
        count = int(micro.numpy())
        writes(count == 0)
        _compact_writes(cycle, gradients, weight, slots)
        compat.eager_assign_add(cycle.local(cycle.weight_total), one)
        compat.eager_assign_add(micro, tf.constant(1, tf.int64))
        return tf.constant(count + 1, tf.int64), count + 1
    updates = [_cond(tf.equal(micro.read_value(), 0),
                     lambda: tf.group(*writes(True)), lambda: tf.group(*writes(False))),
               cycle.local(cycle.weight_total).assign_add(one)]
    updates.extend(_compact_writes(cycle, gradients, weight, slots))
    with tf.control_dependencies(updates):
        with tf.control_dependencies([micro.assign_add(1)]):
            return tf.identity(micro.read_value()), None


def _writes(cycle, gradients, weight, first):
    """This micro-batch's writes into this replica's accumulators.

    A cycle's first micro-batch overwrites every accumulator (``assign``,
    zeros where the gradient is None), so no pass zeroes them after an
    apply; later ones add. A variable with row marks is cleared on the rows
    they mark, not whole (an embedding's cycle touches few rows). Eagerly,
    dense writes go straight to the kernels (one op each, no per-variable
    Python beyond the loop).
    """
    accums = cycle.local_list(cycle.accums)
    marks = dict((int(k), cycle.local(m)) for k, m in cycle.rows.items())
    ops = []
    for i, grad in enumerate(gradients):
        if i not in cycle.plain.compact:  # (written by _compact_writes)
            ops.extend(_write(cycle, i, accums[i], marks.get(i), grad, weight, first))
    return ops


def _write(cycle, i, accum, mark, grad, weight, first):
    """The writes of gradient ``i`` into ``accum`` (see :func:`_writes`)."""
    if grad is None:
        return _clear(accum, mark) if first else []
    if isinstance(grad, tf.IndexedSlices):
        return _scatter(accum, mark, grad, weight, first)
    if grad.dtype != accum.dtype:
        grad = tf.cast(grad, accum.dtype)
    overwrite = first
    if i in cycle.plain.maximum:
        if not first:
            grad = tf.maximum(accum.read_value(), grad)
        overwrite = True
    elif weight is not None:
        grad = grad * weight
    ops = []
    if mark is not None:  # a sparse variable's dense gradient: every row
        ops.append(mark.assign(tf.ones_like(mark.read_value())))
    if tf.executing_eagerly():
        (compat.eager_assign if overwrite else compat.eager_assign_add)(accum, grad)
    else:
        ops.append(accum.assign(grad) if overwrite else accum.assign_add(grad))
    return ops


def _present_writes(cycle, gradients, first):
    """This micro-batch's flags (1 for a gradient, 0 for None): the cycle's
    first sets them, later ones add theirs (a maximum)."""
    mask = [0.0 if g is None else 1.0 for g in gradients]
    present = cycle.local(cycle.present)
    value = tf.constant(mask, tf.float32)
    if not first and not all(mask):
        value = tf.maximum(_read(present), value)
    if tf.executing_eagerly():
        compat.eager_assign(present, value)
        return []
    return [present.assign(value, read_value=False)]


def _make_compact(cycle, gradients):
    """Compact rows for each sparse gradient that is its variable's first
    gradient and has a static row count (see ``compact_rows``)."""
    plain = cycle.plain
    for i, grad in enumerate(gradients):
        if (not isinstance(grad, tf.IndexedSlices) or i in plain.compact or i in plain.seen
                or str(i) in cycle.rows or i in plain.maximum):
            continue
        variable = plain.variables[i]
        rows = compact_rows.static_rows(grad, variable, cycle.steps)
        if rows is None:
            continue

        def make(name, shape, dtype):
            return plain.variable(name, shape, dtype, _AGG.ONLY_FIRST_REPLICA)

        with tf.init_scope(), compat.strategy_scope(plain.strategy):
            if plain.slots is None:  # shape [1]: the write's scatter index
                plain.slots = make("compact/slots", [1], tf.int64)
                cycle.tracked_compact["slots"] = plain.slots
            part = compact_rows.CompactRows(make, clean_name(variable), variable.shape, rows,
                                            cycle.steps, _accum_dtype(variable),
                                            grad.indices.dtype)
        plain.compact[i] = part
        for kind, v in zip(("values", "indices", "spilled"), part.variables()):
            cycle.tracked_compact["%d-%s" % (i, kind)] = v


def _compact_writes(cycle, gradients, weight, slots):
    """The compact rows' writes: with ``slots`` (a ``step``), each fills the
    next slot (zeros where it has no rows this time); what does not fit a
    slot spills into the dense accumulator."""
    plain = cycle.plain
    if not plain.compact:
        return []
    accums = cycle.local_list(cycle.accums)
    slot = plain.slots.read_value() if slots else None
    ops = []
    for i, part in sorted(plain.compact.items()):
        grad = gradients[i]
        fits = slots and grad is not None and part.fits(grad)
        if slots:
            ops.extend(part.write_slot(slot, grad if fits else None, weight))
        if grad is not None and not fits:
            ops.extend(part.spill(
                lambda first, i=i, grad=grad: _write(cycle, i, accums[i], None, grad, weight,
                                                     first), _cond))
    if slots:
        with tf.control_dependencies(ops):
            ops.append(plain.slots.assign_add(tf.ones([1], tf.int64)))
    return ops


@compat.do_not_convert
def pending(cycle):
    """The pending sums (see ``GradientAccumulator.gradients``). The
    accumulators keep a finished cycle's sum until the next cycle's first
    micro-batch overwrites it (no zeroing pass), so a read with no
    micro-batch pending is zeros."""
    replica = not compat.in_cross_replica_context()

    def read(variable):
        if replica:
            return _read(cycle.local(variable))
        return variable.read_value()  # every replica's, aggregated

    accums = cycle.local_list(cycle.accums) if replica else cycle.accums
    compact = cycle.plain.compact
    is_pending = tf.greater(read(cycle.micro_step), 0)
    slots = read(cycle.plain.slots)[0] if compact else None
    sums = []
    for i, accum in enumerate(accums):
        value = (compact[i].gradient(slots, accum, lambda v: v) if i in compact
                 else read(accum) if not replica else _read(accum))
        sums.append(_where(is_pending, value))
    return sums
