"""The accumulator's variables and the writes of a micro-step: building the
accumulators, row marks of sparse variables, compact rows, presence flags."""
from __future__ import absolute_import, division, print_function

from gradacc_compat import compat
from gradacc_compat.core import audit, compact_rows, families
from gradacc_compat.core.checks import clean_name
from gradacc_compat.compat import tf
from gradacc_compat.core.accumulator_state import AGG as _AGG, once_per_strategy
from gradacc_compat.core.accumulator_ops import (accum_dtype as _accum_dtype, clear as _clear,
                                                 cond as _cond, is_default as _is_default,
                                                 read as _read, scatter as _scatter,
                                                 where as _where)

__all__ = ["AccumulatorWrites"]


class AccumulatorWrites(object):
    """Mixed into :class:`GradientAccumulator`: what a micro-step writes."""

    def state_variables(self):
        """Every variable that holds a pending cycle, in a fixed order: the
        accumulators (in the model variables' order), the counters, then the
        row marks of the sparse variables (in the model variables' order)."""
        compact = [v for _, part in sorted(self._plain.compact.items()) for v in part.variables()]
        present = [self._present] if self._accums is not None else []
        skipped = [self._skipped] if self._skipped is not None else []
        return (list(self._accums or []) + [self._micro_step, self._iterations,
                                            self._weight_total] + skipped + present
                + self._marks()
                + ([self._plain.slots] if compact else []) + compact)

    def _marks(self):
        """The row marks, in the model variables' order."""
        return [self._rows[k] for k in sorted(self._rows or {}, key=int)]

    @property
    def sparse_indices(self):
        """Positions (in the variable list) whose accumulator marks the rows a
        cycle touched: the variables that received ``tf.IndexedSlices``."""
        return sorted(int(k) for k in (self._rows or {}))

    def build(self, variables, sparse=()):
        """Creates the accumulators (once, whichever replica asks first) and
        the row marks of the variables at positions ``sparse`` (a Keras
        wrapper that loads a saved model makes its state up front)."""
        if self._accums is None:
            strategy = self._plain.strategy
            plain = self._plain
            audit.first_use(plain, variables, self._steps, strategy)

            def build():
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
                self._adopt(plain.accums)
                return plain.accums

            self._adopt(once_per_strategy(build))  # other replicas' objects
        self._track_rows(sparse)

    def _adopt(self, accums):
        if self._accums is None:
            self._accums = accums
            self._present = self._plain.present
            self._rows = {}
            self._compact = {}

    def _track_rows(self, indices):
        """Row marks for the variables at ``indices``: one float per row of
        the variable, set where a cycle's sparse gradients touched it, and
        wherever its accumulator may hold anything else (every row, once a
        dense gradient was added): a cycle's first micro-batch clears only
        the marked rows. Created on a variable's first sparse gradient (and,
        for a model loaded mid-cycle, when the optimizer is rebuilt)."""
        missing = [i for i in indices if str(i) not in self._rows]
        if not missing:
            return
        strategy = self._plain.strategy
        plain = self._plain
        variables = plain.variables

        def build():
            marks = getattr(plain, "rows", None)
            if marks is None:
                marks = plain.rows = {}
            with tf.init_scope(), compat.strategy_scope(strategy):
                for i in missing:
                    if i not in marks:
                        rows = tf.TensorShape(variables[i].shape)[:1]
                        marks[i] = plain.variable("rows/" + clean_name(variables[i]), rows,
                                                  tf.float32, _AGG.SUM,
                                                  fill=1 if i in plain.dense else 0)
            self._adopt_rows(marks)  # in cross-replica context, as in build
            return dict(marks)

        self._adopt_rows(once_per_strategy(build))  # other replicas' objects

    def _adopt_rows(self, marks):
        for i, mark in sorted(marks.items()):
            if str(i) not in self._rows:
                self._rows[str(i)] = mark

    def _rows_as_dense(self, adapter, optimizer, reduce):
        """Whether ``optimizer`` may receive this accumulator's sparse
        gradients dense: its update of a ``tf.IndexedSlices`` equals its
        dense update (the family says which do), and the apply stays in this
        process -- one device, no cluster task, no ``reduce`` across
        processes (Horovod's) -- where a dense gradient would make an
        all-reduce or a parameter server carry the whole table instead of
        its rows. Such a variable keeps no row marks:
        a cycle's first micro-batch writes its accumulator whole, as a dense
        gradient's does, and the apply reads it whole (no gather, no
        ``tf.where`` over the marks)."""
        plain = self._plain
        return (adapter.updates_every_row(optimizer) and _is_default(plain.strategy)
                and plain.device is None and reduce is None)

    def _sparse_apply(self, i, adapter, strategy):
        """Whether variable ``i`` is applied as ``tf.IndexedSlices`` over the
        rows its cycle touched: every gradient it ever received was sparse,
        and the optimizer sums the rows that the replicas' all-reduce
        repeats (else dense is the exact apply: see the family adapter)."""
        return (str(i) in self._rows and i not in self._plain.dense
                and (adapter.sums_duplicate_rows or strategy.num_replicas_in_sync == 1))

    def _writes(self, gradients, weight, first):
        """This micro-batch's writes into this replica's accumulators.

        A cycle's first micro-batch overwrites every accumulator (``assign``,
        zeros where the gradient is None), so no pass zeroes them after an
        apply; later ones add. A variable with row marks is cleared on the
        rows they mark, not whole (an embedding's cycle touches few rows).
        Eagerly, dense writes go straight to the kernels (one op each, no
        per-variable Python beyond the loop).
        """
        accums = self._local_list(self._accums)
        marks = dict((int(k), self._local(m)) for k, m in self._rows.items())
        ops = []
        for i, grad in enumerate(gradients):
            if i not in self._plain.compact:  # (written by _compact_writes)
                ops.extend(self._write(i, accums[i], marks.get(i), grad, weight, first))
        return ops

    def _write(self, i, accum, mark, grad, weight, first):
        """The writes of gradient ``i`` into ``accum`` (see :meth:`_writes`)."""
        if grad is None:
            return _clear(accum, mark) if first else []
        if isinstance(grad, tf.IndexedSlices):
            return _scatter(accum, mark, grad, weight, first)
        if grad.dtype != accum.dtype:
            grad = tf.cast(grad, accum.dtype)
        overwrite = first
        if i in self._plain.maximum:
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

    def _make_compact(self, gradients):
        """Compact rows for each sparse gradient that is its variable's first
        gradient and has a static row count (see ``compact_rows``)."""
        plain = self._plain
        for i, grad in enumerate(gradients):
            if (not isinstance(grad, tf.IndexedSlices) or i in plain.compact or i in plain.seen
                    or str(i) in self._rows or i in plain.maximum):
                continue
            variable = plain.variables[i]
            rows = compact_rows.static_rows(grad, variable, self._steps)
            if rows is None:
                continue

            def make(name, shape, dtype):
                return plain.variable(name, shape, dtype, _AGG.ONLY_FIRST_REPLICA)

            with tf.init_scope(), compat.strategy_scope(plain.strategy):
                if plain.slots is None:  # shape [1]: the write's scatter index
                    plain.slots = make("compact/slots", [1], tf.int64)
                    self._compact["slots"] = plain.slots
                part = compact_rows.CompactRows(make, clean_name(variable), variable.shape, rows,
                                                self._steps, _accum_dtype(variable),
                                                grad.indices.dtype)
            plain.compact[i] = part
            for kind, v in zip(("values", "indices", "spilled"), part.variables()):
                self._compact["%d-%s" % (i, kind)] = v

    def _compact_writes(self, gradients, weight, slots):
        """The compact rows' writes: with ``slots`` (a ``step``), each fills
        the next slot (zeros where it has no rows this time); what does not
        fit a slot spills into the dense accumulator."""
        compact = self._plain.compact
        if not compact:
            return []
        accums = self._local_list(self._accums)
        slot = self._plain.slots.read_value() if slots else None
        ops = []
        for i, part in sorted(compact.items()):
            grad = gradients[i]
            fits = slots and grad is not None and part.fits(grad)
            if slots:
                ops.extend(part.write_slot(slot, grad if fits else None, weight))
            if grad is not None and not fits:
                ops.extend(part.spill(
                    lambda first, i=i, grad=grad: self._write(i, accums[i], None, grad, weight,
                                                              first), _cond))
        if slots:
            with tf.control_dependencies(ops):
                ops.append(self._plain.slots.assign_add(tf.ones([1], tf.int64)))
        return ops

    def _local_list(self, variables):
        """``[self._local(v) for v in variables]``, computed once per replica."""
        ctx = tf.distribute.get_replica_context()
        key = (id(variables), None if ctx is None or compat.in_cross_replica_context()
               else compat.replica_index(ctx))
        cache = self._plain.locals
        if key not in cache or cache[key][0] is not variables:
            cache[key] = (variables, [self._local(v) for v in variables])
        return cache[key][1]

    @compat.do_not_convert
    def _pending(self):
        """The pending sums (see :attr:`gradients`). The accumulators keep a
        finished cycle's sum until the next cycle's first micro-batch
        overwrites it (no zeroing pass), so a read with no micro-batch
        pending is zeros."""
        replica = not compat.in_cross_replica_context()

        def read(variable):
            if replica:
                return _read(self._local(variable))
            return variable.read_value()  # every replica's, aggregated

        accums = self._local_list(self._accums) if replica else self._accums
        compact = self._plain.compact
        pending = tf.greater(read(self._micro_step), 0)
        slots = read(self._plain.slots)[0] if compact else None
        sums = []
        for i, accum in enumerate(accums):
            value = (compact[i].gradient(slots, accum, lambda v: v) if i in compact
                     else read(accum) if not replica else _read(accum))
            sums.append(_where(pending, value))
        return sums

    def _components(self, variable):
        """The components of ``variable`` this context may write."""
        if compat.in_cross_replica_context():
            return compat.local_results(self._plain.strategy, variable)
        return (self._local(variable),)

    def _local(self, variable):
        """This replica's component: read/written directly, which also avoids
        TF 1.14 mistaking a nested replica context for cross-replica."""
        parts = compat.local_results(self._plain.strategy, variable)
        if len(parts) == 1:
            return parts[0]
        return parts[compat.replica_index(tf.distribute.get_replica_context())]
