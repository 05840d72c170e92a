"""Exact gradient accumulation for custom training loops."""
from __future__ import absolute_import, division, print_function

import numbers

from gradacc_compat import audit, compat, compact_rows, families, horovod_support
from gradacc_compat._checks import (check_gradient, check_nonfinite, check_reduction,
                                    check_sequence, check_steps, check_transform,
                                    check_weight, clean_name, finite_checked, names,
                                    runtime_checks)
from gradacc_compat.compat import tf

__all__ = ["GradientAccumulator"]

_SYNC = tf.VariableSynchronization
_AGG = tf.VariableAggregation


class _PlainState(object):
    """Python-side bookkeeping, kept out of TF's object tracking. One per
    accumulator, shared by every replica's object when each replica builds
    its own (see :func:`once_per_strategy`)."""

    def __init__(self, strategy, name):
        self.strategy = strategy
        self.name = name
        self.variables = None   # the model variables, in the order given
        self.seen = set()       # indices that received a gradient at least once
        self.ever_none = set()  # indices that some call passed None for
        self.present = None     # [variables] flags: got a gradient this cycle
        self.weighted = False   # some accumulate() call passed weight=
        self.dense = set()      # indices that received a dense gradient
        self.maximum = set()    # indices whose cycle value is the maximum
        self.locals = {}        # (list id, replica) -> that replica's components
        self.compact = {}       # index -> CompactRows (see compact_rows)
        self.slots = None       # the slot count of the compact rows
        self.device, self.collections = _task_placement()

    def variable(self, name, shape, dtype, aggregation, fill=0):
        """A replica-local (``ON_READ``) variable named ``<accumulator>/<name>``
        (``init_scope`` drops the caller's name scope), filled with ``fill``:
        micro-steps touch only this replica's component, so they do no
        cross-replica communication."""
        with tf.device(self.device) if self.device else compat.nullcontext(), \
                compat.direct_variables():
            return tf.compat.v1.Variable(
                lambda: tf.fill(shape, tf.cast(fill, dtype)), name="%s/%s" % (self.name, name),
                trainable=False, use_resource=True, synchronization=_SYNC.ON_READ,
                aggregation=aggregation, collections=self.collections)


def _task_placement():
    """``(device, collections)`` for the accumulator's variables.

    In a TF1 graph whose ops this scope places on a cluster task (between-
    graph replication: ``replica_device_setter`` puts variables on ``ps``
    tasks and everything else on this worker), the accumulator is this
    worker's own state: pinned to the device ordinary ops get here (never a
    ps task, where the workers would mix their micro-batches and race on the
    counters) and a LOCAL variable, which each worker's session initializes
    itself. Elsewhere: no device of its own, the global collection.
    """
    graph = tf.compat.v1.get_default_graph()
    if tf.executing_eagerly() or getattr(graph, "building_function", False):
        return None, None
    with tf.init_scope():
        device = tf.no_op(name="gac_placement").device  # where this scope puts ops
    job = tf.DeviceSpec.from_string(device or "").job
    if not job or job == "localhost":
        return None, None
    return device, [tf.compat.v1.GraphKeys.LOCAL_VARIABLES]


class _Shared(object):
    """An opaque holder: what a merge function hands back to every replica
    (``merge_call`` results are split per replica, and a bare replica-local
    variable would arrive as one replica's component on TF 1.14)."""

    def __init__(self, value):
        self.value = value


def once_per_strategy(create):
    """``create()``, run once even when every replica calls this.

    An estimator's ``model_fn`` under ``train_distribute`` (and any replica
    function that builds its optimizer) runs once per replica, so each
    replica builds its own wrapper and accumulator. MirroredStrategy's
    ``merge_call`` runs ONE replica's merge function, with every replica
    waiting: creating there, and handing the result back to each replica,
    gives them all the same state. Outside replica context it is a call.
    """
    ctx = tf.distribute.get_replica_context()
    if ctx is None or not tf.distribute.has_strategy():
        return create()
    return ctx.merge_call(lambda _strategy: _Shared(create())).value


class GradientAccumulator(tf.Module):
    """Accumulates micro-batch gradients and applies their exact mean.

    Usage::

        acc = gac.GradientAccumulator(steps=4)      # inside strategy.scope() if any
        with tf.GradientTape() as tape:
            loss = loss_fn(model(x), y)
        grads = tape.gradient(loss, model.trainable_variables)
        acc.step(optimizer, grads, model.trainable_variables)

    Every ``steps``-th call of :meth:`step` applies the mean of the gradients
    accumulated since the last apply, with ``optimizer``; the calls in
    between only add to replica-local accumulators. The optimizer's own state
    (slots, ``iterations``, schedules) therefore advances once per effective
    step, and the result equals one step on the concatenated batch.

    Under a ``tf.distribute`` (or ``tf.contrib.distribute``) strategy, call
    ``step``/``accumulate`` in replica context (inside ``strategy.run``). The
    accumulators are replica-local (``ON_READ``); the only cross-replica
    reduction is the optimizer's own, once per effective step. Keep writing the
    loss as without accumulation (``tf.nn.compute_average_loss`` or a loss
    scaled by the global batch).

    Args:
      steps: micro-batches per applied update, an int >= 1.
      reduction: ``"mean"`` (default) applies the (weighted) mean of the
        cycle's gradients; ``"sum"`` applies their sum.
      name: name for the accumulator's variables.
      transform: ``fn(grads_and_vars) -> grads_and_vars``, run on the
        cycle's accumulated gradient (the big batch's) just before the
        optimizer applies it: the place for what TF1 code does between
        ``compute_gradients`` and ``apply_gradients`` (clipping by the
        global norm, say), which on micro-batches would act on each one.
        Under a multi-replica strategy the replicas' sums are all-reduced
        first, so it sees the global gradient (one more all-reduce per
        effective step).
      clip_global_norm: a float: ``transform`` that clips the gradient by
        its global norm (``tf.clip_by_global_norm``), as BERT's
        ``optimization.py`` does before its apply.
      nonfinite: what a cycle whose gradients hold inf or NaN does:
        ``"apply"`` (default: what the big batch does, the values reach the
        optimizer), ``"skip"`` (the whole cycle is dropped, as a
        LossScaleOptimizer drops a step; counted in ``skipped``) or
        ``"raise"`` (the micro-step raises ``InvalidArgumentError`` before
        any state changes).
      compact_rows: whether ``step`` may keep a sparse variable's rows in
        compact slots (see ``compact_rows.py``). The ``gac.wrap`` Keras
        wrappers turn it off: the Keras save formats keep an optimizer's
        state by position, and compact slots are made on first use.

    For wrappers and engines (``gac.wrap``, TF 1.x collectives), a small
    documented interface, so that no module outside this one touches an
    underscore member: :meth:`build`, :meth:`state_variables`,
    :meth:`pending_count`, :meth:`wrapped_step` and :meth:`apply_pending`.

    Raises:
      TypeError, ValueError: ``steps`` is not an int from 1 to 2**31 - 1,
        ``reduction`` is not ``"mean"`` or ``"sum"``, or ``nonfinite`` not
        one of the three.
    """

    def __init__(self, steps, reduction="mean", name="gradient_accumulator", nonfinite="apply",
                 transform=None, clip_global_norm=None, compact_rows=True):
        steps = check_steps(steps)
        self._compact_rows = bool(compact_rows)
        check_reduction(reduction)
        check_nonfinite(nonfinite)
        self._clip_global_norm = clip_global_norm
        self._transform = check_transform(transform, clip_global_norm)
        super(GradientAccumulator, self).__init__(name=name)
        self._steps = steps
        self._reduction = reduction
        self._nonfinite = nonfinite
        strategy = compat.get_strategy()

        def create():
            plain = _PlainState(strategy, name)
            with tf.init_scope(), compat.strategy_scope(strategy):
                return (plain,
                        plain.variable("micro_step", [], tf.int64, _AGG.ONLY_FIRST_REPLICA),
                        plain.variable("iterations", [], tf.int64, _AGG.ONLY_FIRST_REPLICA),
                        plain.variable("weight_total", [], tf.float32, _AGG.SUM),
                        plain.variable("skipped", [], tf.int64, _AGG.ONLY_FIRST_REPLICA)
                        if nonfinite == "skip" else None)

        (self._plain, self._micro_step, self._iterations,
         self._weight_total, self._skipped) = once_per_strategy(create)
        self._accums = None
        self._rows = None
        self._compact = None

    def get_config(self):
        """The constructor's arguments: ``from_config(get_config())`` makes
        an equal, empty accumulator (a checkpoint carries the state). A
        ``transform`` function is code, not configuration: pass it again."""
        config = {"steps": self._steps, "reduction": self._reduction, "name": self.name,
                  "nonfinite": self._nonfinite}
        if not self._compact_rows:
            config["compact_rows"] = False
        if self._clip_global_norm is not None:
            config["clip_global_norm"] = self._clip_global_norm
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    # ------------------------------------------------------------ properties
    @property
    def steps(self):
        return self._steps

    @property
    def reduction(self):
        return self._reduction

    @property
    def transform(self):
        """The function run on the accumulated gradient before the apply,
        or None (``clip_global_norm`` makes one)."""
        return self._transform

    @property
    def nonfinite(self):
        """What a cycle with an inf/NaN gradient does: "apply" (the big
        batch's result), "skip" (dropped, counted in :attr:`skipped`) or
        "raise" (the micro-step raises before any state changes)."""
        return self._nonfinite

    @property
    def skipped(self):
        """Cycles dropped for inf/NaN (``nonfinite="skip"``: an int64
        variable; else None)."""
        return self._skipped

    @property
    def micro_step(self):
        """Micro-batches pending in this cycle (an int64 variable)."""
        return self._micro_step

    @property
    def iterations(self):
        """Cycles handed to the optimizer so far (an int64 variable): its
        effective steps, except that a LossScaleOptimizer may still skip one
        (its own ``iterations`` then lags); cycles dropped by
        ``nonfinite="skip"`` are counted in :attr:`skipped`, not here."""
        return self._iterations

    def pending_count(self):
        """This replica's pending micro-batch count (an int64 tensor; in a
        TF1 graph, an op to run)."""
        return _read(self._local(self._micro_step))

    def counts(self):
        """``(micro_step, iterations)`` read as int64 tensors in any context
        (under a strategy, this worker's first replica: replicas count
        alike). In a TF1 graph, ops to run."""
        strategy = self._plain.strategy
        return tuple(_read(compat.local_results(strategy, v)[0])
                     for v in (self._micro_step, self._iterations))

    @property
    def built(self):
        """Whether the accumulator's variables exist (after the first
        ``step``/``accumulate``, or a wrapper's build)."""
        return self._accums is not None

    @property
    def gradients(self):
        """What is pending: per variable, the sum of this cycle's (weighted)
        gradients as a tensor -- zeros after an apply or :meth:`reset`, and
        for a variable that got no gradient this cycle. None before the
        first ``step``/``accumulate``. (In a TF1 graph each read builds the
        ops that compute it: run them.) Under a strategy, in replica context
        it is this replica's sum; in cross-replica context, all replicas'.
        """
        if self._accums is None:
            return None
        return self._pending()

    # ------------------------------------------------------------- public
    def step(self, optimizer, gradients, variables, weight=None):
        """Adds this micro-batch; every ``steps``-th call applies and resets.

        Args:
          optimizer: the optimizer that applies the accumulated gradient.
          gradients: one gradient per variable (``None`` is skipped;
            ``tf.IndexedSlices`` are added sparsely).
          variables: the variables, in the same order, the same every call.
          weight: optional number of examples (or tokens) in this
            micro-batch; the applied gradient is then the weighted mean.

        Returns:
          A boolean tensor, true when this call applied an update. In graph
          mode run it (it carries the accumulation and the apply).
        """
        _check_not_wrapped(optimizer, "step", self._steps)
        return self.wrapped_step(optimizer, gradients, variables, weight,
                                 reduce=horovod_support.rank_reduction(optimizer))

    @compat.do_not_convert
    def wrapped_step(self, optimizer, gradients, variables, weight=None, apply_fn=None,
                     reduce=None):
        """``step`` for wrappers and engines: the optimizer may be a
        ``gac.wrap`` wrapper (the wrappers pass themselves); the apply is
        ``apply_fn(grads_and_vars)`` when given (the inner apply, e.g. with
        ``global_step``); ``reduce(grads, variables)`` is the all-reduce
        across processes of the accumulated gradient, run before the apply
        (Horovod's: the caller picks it, ``horovod_support.rank_reduction``;
        None: none)."""
        adapter = families.adapter_for(optimizer)
        compact = self._compact_rows
        if compat.collectives_in_tf1_graph(self._plain.strategy):
            raise NotImplementedError(_TF1_COLLECTIVES % (type(self._plain.strategy).__name__,))
        dense = self._rows_as_dense(adapter, optimizer, reduce)
        count, known = self._accumulate(gradients, variables, weight, dense, compact and dense)
        steps = self._steps
        if known is not None and known < steps and _is_default(self._plain.strategy):
            return tf.constant(False)  # eager, one device: the host knows
        # A variable with a gradient now is in this cycle for sure; one
        # passed None may or may not be (other calls may have fed it).
        guarded = [i for i, g in enumerate(gradients) if g is None]
        return self._apply_if(adapter, optimizer, count, lambda c: tf.greater_equal(c, steps),
                              apply_fn, reduce, guarded)

    def accumulate(self, gradients, variables, weight=None):
        """Adds one micro-batch's gradients. Returns the pending micro-step count."""
        return self._accumulate(gradients, variables, weight)[0]

    @compat.do_not_convert
    def _accumulate(self, gradients, variables, weight, rows_as_dense=False, slots=False):
        """``accumulate``, and eagerly the new count as a Python int (else
        None). ``rows_as_dense``: the sparse gradients of variables without
        row marks are accumulated as dense ones (see :meth:`_rows_as_dense`).
        ``slots``: this call writes a slot of the compact rows, made here for
        the variables whose first gradient this is."""
        gradients, variables, weight, checks = self._check_inputs(gradients, variables, weight)
        if checks:
            # Every write consumes a gated value (a control input on the
            # writes' cond alone does not hold them back inside a function).
            with tf.control_dependencies(checks):
                gradients = [_gated(g) for g in gradients]
                weight = None if weight is None else tf.identity(weight)
                return self._accumulate_checked(gradients, variables, weight, rows_as_dense,
                                                slots)
        return self._accumulate_checked(gradients, variables, weight, rows_as_dense, slots)

    def _accumulate_checked(self, gradients, variables, weight, rows_as_dense, slots):
        self.build(variables)
        plain = self._plain
        if slots:
            self._make_compact(gradients)
        sparse = [i for i, g in enumerate(gradients)
                  if isinstance(g, tf.IndexedSlices) and i not in plain.compact]
        if rows_as_dense:
            plain.dense.update(i for i in sparse if str(i) not in self._rows)
        else:
            self._track_rows(sparse)
        for i, grad in enumerate(gradients):
            if grad is None:
                plain.ever_none.add(i)
                continue
            plain.seen.add(i)
            if not isinstance(grad, tf.IndexedSlices):
                plain.dense.add(i)
        if weight is not None:
            plain.weighted = True
        micro = self._local(self._micro_step)
        one = tf.constant(1.0) if weight is None else weight
        if tf.executing_eagerly():
            # The host knows which micro-batch this is: no branch, no ops
            # that only pick one, and the counters go straight to the kernels.
            count = int(micro.numpy())
            self._writes(gradients, weight, count == 0)
            self._present_writes(gradients, count == 0)
            self._compact_writes(gradients, weight, slots)
            compat.eager_assign_add(self._local(self._weight_total), one)
            compat.eager_assign_add(micro, tf.constant(1, tf.int64))
            return tf.constant(count + 1, tf.int64), count + 1
        updates = [_cond(tf.equal(micro.read_value(), 0),
                         lambda: tf.group(*(self._writes(gradients, weight, True)
                                            + self._present_writes(gradients, True))),
                         lambda: tf.group(*(self._writes(gradients, weight, False)
                                            + self._present_writes(gradients, False)))),
                   self._local(self._weight_total).assign_add(one)]
        updates.extend(self._compact_writes(gradients, weight, slots))
        with tf.control_dependencies(updates):
            with tf.control_dependencies([micro.assign_add(1)]):
                return tf.identity(micro.read_value()), None

    def apply_gradients(self, optimizer):
        """Applies what is pending now (a no-op when nothing is).

        For loops that decide on the host when to apply; callable in replica
        context or, under a strategy, in cross-replica context.
        """
        _check_not_wrapped(optimizer, "apply_gradients", self._steps)
        return self.apply_pending(optimizer, reduce=horovod_support.rank_reduction(optimizer))

    @compat.do_not_convert
    def apply_pending(self, optimizer, apply_fn=None, reduce=None):
        """:meth:`apply_gradients` for wrappers and engines: ``apply_fn`` and
        ``reduce`` as in :meth:`wrapped_step` (the optimizer may be a
        wrapper)."""
        adapter = families.adapter_for(optimizer)
        if self._accums is None:  # nothing was ever accumulated
            return tf.constant(False)
        # Host code (an epoch-end callback, say) may call this outside the
        # strategy's scope: enter it, the apply is cross-replica then.
        with compat.strategy_scope(self._plain.strategy):
            return self._apply_if(adapter, optimizer, None, lambda c: tf.greater(c, 0), apply_fn,
                                  reduce, sorted(self._plain.ever_none))

    def flush(self, optimizer):
        """Applies a partial cycle (end of an epoch) with correct weighting.

        Same as :meth:`apply_gradients`: the divisor is the number of pending
        micro-batches (or their total weight), not ``steps``.
        """
        return self.apply_gradients(optimizer)

    @compat.do_not_convert
    def reset(self):
        """Drops what is pending (accumulated gradients and counts)."""
        return tf.group(*self._reset_ops(self._components))

    # ------------------------------------------------------------ helpers
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

    def _check_strategy(self, what):
        current = compat.get_strategy()
        if current is not self._plain.strategy:
            raise ValueError(
                "GradientAccumulator.%s was called under %s, but the accumulator "
                "was created under %s. Create the accumulator inside the "
                "`strategy.scope()` of the strategy that runs the training step."
                % (what, type(current).__name__, type(self._plain.strategy).__name__))

    def _check_inputs(self, gradients, variables, weight):
        """Validates everything before any state changes."""
        self._check_strategy("accumulate")
        if compat.in_cross_replica_context() and not _is_default(self._plain.strategy):
            raise RuntimeError(
                "GradientAccumulator.accumulate/step must run in replica context: "
                "call it inside strategy.run(...) (experimental_run_v2 or "
                "extended.call_for_each_replica on older TF), not directly under "
                "strategy.scope().")
        gradients = check_sequence(gradients, "gradients", "[grad] or tape.gradient(loss, "
                                   "variables)")
        variables = check_sequence(variables, "variables", "[variable] or "
                                   "model.trainable_variables")
        if len(gradients) != len(variables):
            raise ValueError(
                "Received %d gradients for %d variables; pass one gradient (or None) "
                "per variable, in the same order as `variables`."
                % (len(gradients), len(variables)))
        if not variables:
            raise ValueError("Received no variables; pass the variables the gradients "
                             "belong to (e.g. model.trainable_variables).")
        for v in variables:
            if not (hasattr(v, "assign") and hasattr(v, "shape") and hasattr(v, "dtype")):
                raise TypeError("Expected variables, received %r (type %s) in `variables`."
                                % (v, type(v).__name__))
        arguments = compat.passed_as_arguments(variables)
        if arguments:
            raise ValueError(
                "GradientAccumulator received variables (%s) that are arguments of the "
                "tf.function being traced. TensorFlow %s reuses such a trace for other "
                "variables of the same shapes, and the accumulator's checks run only while "
                "tracing: another variable list would then receive this list's pending "
                "gradients. Use the variables from the function's closure (e.g. "
                "model.trainable_variables inside the function) instead of passing them in."
                % (names(arguments), compat.TF_VERSION_STRING))
        known = self._plain.variables
        if known is not None and (len(known) != len(variables)
                                  or any(a is not b for a, b in zip(known, variables))):
            raise ValueError(
                "This accumulator was built for %d variables (%s); received %d "
                "variables (%s). Use one GradientAccumulator per variable list."
                % (len(known), names(known), len(variables), names(variables)))
        checked = []
        for g, v in zip(gradients, variables):
            checked.append(check_gradient(g, v))
        if not self._plain.seen and all(g is None for g in checked):
            raise ValueError(
                "Every gradient passed to this accumulator so far was None (%d variables: "
                "%s); nothing was accumulated. Check that the loss depends on the variables "
                "and that the gradients were computed inside the tape."
                % (len(variables), names(variables)))
        weight = check_weight(weight)
        checked, checks = runtime_checks(checked, variables, weight)
        if self._nonfinite == "raise":
            checked, finite = finite_checked(checked, variables)
            checks = checks + finite
        return checked, variables, weight, checks

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

    def _apply_if(self, adapter, optimizer, count, predicate, apply_fn=None, reduce=None,
                  guarded=()):
        """Decides in cross-replica context, applies back in replica context.

        A ``tf.cond`` around ``apply_gradients`` in replica context fails
        under MirroredStrategy (the optimizer's ``merge_call`` inside the
        cond), so the decision is taken after ``merge_call``, and the apply
        re-enters replica context with ``call_for_each_replica``.
        """
        self._check_strategy("apply")
        variables = self._plain.variables
        if not variables:
            raise ValueError("Nothing to apply: accumulate() has not been called yet.")
        if not self._plain.seen:
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
                count_value = self._micro_step.read_value()
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
                used = [variables[i] for i in sorted(self._plain.seen)]
                with tf.init_scope(), compat.strategy_scope(strategy), \
                        compat.direct_variables():
                    adapter.prepare(optimizer, used)
            with self._apply_placement():
                applied = _cond(applies,
                                lambda: self._apply_present(strategy, adapter, optimizer,
                                                            apply_fn, reduce, guarded))
            if not tf.executing_eagerly() and _is_default(strategy):
                compat.run_as_call(applied)  # the untaken apply: one call, not ~100 dead ops
            return applied

        ctx = tf.distribute.get_replica_context()
        if ctx is None:
            return decide(self._plain.strategy)
        if count is None:
            count = self._local(self._micro_step).read_value()
        return ctx.merge_call(decide, args=(count,))

    def _apply_present(self, strategy, adapter, optimizer, apply_fn, reduce, guarded):
        """Cross-replica: the apply of the variables that got a gradient in
        this cycle, as Keras skips a None gradient (the others, and their
        slots, are left alone). Eagerly the flags are read; in a graph the
        variables in ``guarded`` (those that may have got none) are decided
        by ``tf.cond`` on their flags, one branch per possible subset (up to
        ``_MAX_GUARDED`` of them; beyond, all or none)."""
        def apply_now():
            return self._apply_present_now(strategy, adapter, optimizer, apply_fn, reduce,
                                           guarded)

        def apply_finite():  # nonfinite="skip": a cycle with inf/NaN is dropped
            return _cond(self._all_finite(strategy), apply_now,
                         lambda: self._drop_cycle(strategy, skipped=True))

        apply = apply_finite if self._nonfinite == "skip" else apply_now
        if self._plain.weighted and self._reduction == "mean":
            # A cycle whose weights are all zero holds no example: nothing
            # to apply (a zero gradient would still move Adam's weights).
            return _cond(tf.greater(_total(strategy, self._weight_total), 0.0), apply,
                         lambda: self._drop_cycle(strategy, skipped=False))
        return apply()

    def _all_finite(self, strategy):
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
        for i in sorted(self._plain.seen):
            for accum in compat.local_results(strategy, self._accums[i]):
                parts.append(tf.reduce_all(tf.math.is_finite(_read(accum))))
            if i in self._plain.compact:
                values = self._plain.compact[i].values
                parts.append(tf.reduce_all(tf.math.is_finite(_read(values))))
        return tf.reduce_all(tf.stack(parts))

    def _drop_cycle(self, strategy, skipped):
        """The cycle's counters reset on every replica, nothing applied;
        with ``skipped`` (``nonfinite="skip"``) one more skipped cycle."""
        def replica_drop():
            resets = self._reset_ops(lambda v: (self._local(v),))
            if skipped:
                resets.append(self._local(self._skipped).assign_add(1))
            return tf.group(*resets)
        result = strategy.extended.call_for_each_replica(replica_drop)
        return tf.group(*compat.local_results(strategy, result))

    def _apply_present_now(self, strategy, adapter, optimizer, apply_fn, reduce, guarded):
        seen = sorted(self._plain.seen)
        if tf.executing_eagerly():
            flags = _local_sum(strategy, self._present).numpy()
            return self._apply_all(strategy, adapter, optimizer, apply_fn, reduce,
                                   [i for i in seen if flags[i] > 0])
        guarded = [i for i in guarded if i in self._plain.seen]
        always = [i for i in seen if i not in guarded]
        if not guarded:  # every variable had a gradient: no flag to read
            return self._apply_all(strategy, adapter, optimizer, apply_fn, reduce, always)
        # Each replica's flags, read where they are: an aggregated read of
        # the variable would be one more all-reduce per effective step.
        present = _local_sum(strategy, self._present)
        flags = [tf.greater(present[i], 0.0) for i in guarded]

        def apply(chosen):
            return self._apply_all(strategy, adapter, optimizer, apply_fn, reduce,
                                   sorted(always + chosen))

        if len(guarded) > _MAX_GUARDED:
            audit.warn_once(self._plain, "guarded", _MIXED_NONE % (
                len(guarded), _MAX_GUARDED, names([self._plain.variables[i] for i in guarded]),
                _MAX_GUARDED))
            return _cond(tf.reduce_any(flags), lambda: apply(guarded), lambda: apply([]))

        def branch(j, chosen):
            if j == len(guarded):
                return apply(chosen)
            return _cond(flags[j], lambda: branch(j + 1, chosen + [guarded[j]]),
                         lambda: branch(j + 1, chosen))
        return branch(0, [])

    def _apply_placement(self):
        """Where the apply's ``tf.cond`` goes. Between-graph replication (the
        accumulator on a cluster task, under a ``replica_device_setter``) in
        TF2 control flow: on no device, so that colocation places the
        branch's ops. A TF2 cond is a function call; when TF inlines it,
        the body's ops take the call's device (this worker's) beside the
        optimizer's colocation with its variables on the ps, which TF
        2.4-2.11 refuse without soft placement ("Cannot colocate nodes ...
        incompatible jobs"). Elsewhere the scope stays (a replica's device).
        """
        if self._plain.device is None or compat.TF1 or tf.executing_eagerly():
            return compat.nullcontext()
        return tf.compat.v1.device(None)

    def _present_writes(self, gradients, first):
        """This micro-batch's flags (1 for a gradient, 0 for None): the
        cycle's first sets them, later ones add theirs (a maximum)."""
        mask = [0.0 if g is None else 1.0 for g in gradients]
        present = self._local(self._present)
        value = tf.constant(mask, tf.float32)
        if not first and not all(mask):
            value = tf.maximum(_read(present), value)
        if tf.executing_eagerly():
            compat.eager_assign(present, value)
            return []
        return [present.assign(value, read_value=False)]

    def _apply_all(self, strategy, adapter, optimizer, apply_fn=None, reduce=None,
                   indices=None):
        """Cross-replica: one apply per replica (of the variables at
        ``indices``; nothing where none), then the resets. ``reduce``
        (Horovod's, see ``horovod_support``): the one all-reduce across
        ranks, of the accumulated gradient."""
        divisor = None
        if self._reduction == "mean" and self._plain.weighted:
            # The replica-local totals summed, divided by the replica count:
            # weight=None counts 1 per call, so equal weights give the same
            # update as no weights.
            divisor = (_total(strategy, self._weight_total)
                       / float(strategy.num_replicas_in_sync))
        if indices is None:
            indices = sorted(self._plain.seen)
        variables = self._plain.variables

        def replica_apply():
            div = divisor
            if self._reduction == "mean" and div is None:
                div = tf.cast(self._local(self._micro_step).read_value(), tf.float32)
            grads = []
            accums = self._local_list(self._accums)
            divisors = {}  # the divisor in each accumulator dtype, cast once

            def scale(value):
                if div is None:
                    return value
                if value.dtype not in divisors:
                    divisors[value.dtype] = tf.cast(div, value.dtype)
                return tf.math.divide_no_nan(value, divisors[value.dtype])

            compact = self._plain.compact
            slots = self._plain.slots.read_value()[0] if compact else None
            for i in indices:
                accum = accums[i]
                rows = None
                if i in compact:
                    value = compact[i].gradient(slots, accum, scale)
                elif self._sparse_apply(i, adapter, strategy):
                    # The rows the cycle touched, as the big batch's
                    # IndexedSlices has them: optimizers that update only the
                    # rows present (Momentum, Ftrl, Adagrad...) stay exact.
                    mark = self._local(self._rows[str(i)]).read_value()
                    rows = tf.reshape(tf.where(mark > 0), [-1])
                    value = tf.gather(accum, rows)  # reads those rows only
                else:
                    value = _read(accum)
                if i not in self._plain.maximum and i not in compact:
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
            if self._transform is not None and grads:
                grads = _transformed(self._transform, grads, applied_vars,
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
                resets = self._reset_ops(lambda v: (self._local(v),))
                resets.append(self._local(self._iterations).assign_add(1))
            return tf.group(*resets)

        result = strategy.extended.call_for_each_replica(replica_apply)
        return tf.group(*compat.local_results(strategy, result))

    def _reset_ops(self, components):
        """Ends the cycle: its counters back to zero. The accumulators keep
        their sums until the next cycle's first micro-batch overwrites them."""
        counters = [self._weight_total, self._micro_step]
        if self._plain.compact:
            counters.append(self._plain.slots)
            counters.extend(part.spilled for _, part in sorted(self._plain.compact.items()))
        ops = []
        for v in counters:
            for part in components(v):
                ops.append(part.assign(tf.zeros_like(part)))
        return ops


#: Variables whose presence in a cycle a graph decides by tf.cond, at most:
#: one branch (one apply) per subset of them.
_MAX_GUARDED = 3
_MIXED_NONE = (
    "%d variables may get no gradient in a cycle (more than %d: %s): in a graph or "
    "tf.function the apply leaves them all out when none of them got one, and passes "
    "all of them otherwise, zeros for those that got none (an optimizer with momentum "
    "then still moves those). Eagerly, and for up to %d such variables, only the ones "
    "without a gradient are left out.")


_TF1_COLLECTIVES = (
    "GradientAccumulator.step (and a Keras optimizer from gac.wrap, which uses it) "
    "received a micro-step under %s across workers in a TF 1.x graph. There the apply "
    "would sit in every micro-step's session run, in a tf.cond around the all-reduce, "
    "which TF 1.x's collective ops fail now and then ('Delete called on non-empty "
    "BufRendezvous'). Split the two halves: build the micro-step with "
    "acc.accumulate(grads, variables) in the replica function and the apply with "
    "acc.apply_gradients(optimizer) under strategy.scope(), and run the apply op in "
    "its own session.run after every N micro-step runs; or use gac.wrap on a "
    "tf.compat.v1.train optimizer, whose minimize splits them itself (add "
    "optimizer.make_session_run_hook() to the training hooks). See the README, "
    "'TF 1.x collectives'.")


# ---------------------------------------------------------------- helpers
def _check_not_wrapped(optimizer, what, own_steps):
    steps = families.accumulating_steps(optimizer)
    if steps is not None:
        raise TypeError(
            "GradientAccumulator(steps=%d).%s received a gac.wrap(..., steps=%d) optimizer, "
            "which accumulates itself: the two would nest into cycles of %d x %d "
            "micro-batches. Pass the optimizer you wrapped (wrapper.inner_optimizer for a "
            "tf.compat.v1.train one), or drop the accumulator and call the wrapper's "
            "apply_gradients every micro-batch." % (own_steps, what, steps, own_steps, steps))


def _gated(grad):
    """``grad`` through an identity made under the caller's control
    dependencies (``None`` stays None)."""
    if grad is None:
        return None
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(tf.identity(grad.values), tf.identity(grad.indices),
                                grad.dense_shape)
    return tf.identity(grad)


def _is_default(strategy):
    return not tf.distribute.has_strategy() and strategy is tf.distribute.get_strategy()


def _is_python(value):
    return isinstance(value, (bool, numbers.Number))


def _cond(pred, true_fn, false_fn=None):
    """``tf.cond`` over stateful branches, true when ``true_fn`` ran; its
    output carries the branch's ops (graph mode prunes stateful ops that
    nothing downstream depends on)."""
    if tf.executing_eagerly():
        ran = bool(pred)
        (true_fn if ran else (false_fn or tf.no_op))()
        return tf.constant(ran)

    def branch(fn, value):
        def run():
            op = fn() if fn is not None else None
            with tf.control_dependencies([op] if op is not None else []):
                return tf.identity(tf.constant(value))
        return run

    # The branches may create variables under init_scope (an optimizer's
    # slots): it must lift them to this graph, never to eager mode.
    with compat.graph_entered():
        return tf.cond(pred, branch(true_fn, True), branch(false_fn, False))


def _scatter(accum, rows, grad, weight, first):
    """Adds ``grad`` (``IndexedSlices``) to ``accum`` and marks its rows in
    ``rows``; on a cycle's first micro-batch, after clearing the last cycle's
    rows, or without marks (``rows`` None) the whole accumulator (a zero fill
    and a scatter cost less than ``unsorted_segment_sum`` and an assign)."""
    values = tf.cast(grad.values, accum.dtype)
    if weight is not None:
        values = values * weight
    with tf.control_dependencies(_clear(accum, rows) if first else []):
        writes = [tf.compat.v1.scatter_add(accum, grad.indices, values)]
        if rows is not None:
            writes.append(tf.compat.v1.scatter_update(
                rows, grad.indices, tf.ones(tf.shape(grad.indices), tf.float32)))
        return writes


def _clear(accum, rows):
    """Empties ``accum`` for a new cycle: the rows ``rows`` marks, or the
    whole accumulator where it keeps no marks (``rows`` None)."""
    if rows is None:
        return [accum.assign(_zeros(accum), read_value=False)]
    return _clear_marked(accum, rows)


def _clear_marked(accum, rows):
    """Zeroes the rows of ``accum`` that ``rows`` marks, and the marks."""
    marked = tf.reshape(tf.where(rows.read_value() > 0), [-1])
    count = tf.shape(marked)[:1]
    shape = tf.concat([count, tf.shape(accum, out_type=tf.int32)[1:]], 0)
    return [tf.compat.v1.scatter_update(accum, marked, tf.zeros(shape, accum.dtype)),
            tf.compat.v1.scatter_update(rows, marked, tf.zeros(count, tf.float32))]


def _transformed(transform, grads, variables, replicas):
    """``transform`` on the global accumulated gradient (replica context):
    across replicas their sum, all-reduced here, and each replica hands the
    optimizer 1/replicas of the result (its own all-reduce sums them)."""
    if replicas > 1:
        dense = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g
                 for g in grads]
        grads = _all_reduce_sum(dense)
    pairs = list(transform(list(zip(grads, variables))))
    if len(pairs) != len(variables) or any(
            v is not w for (_, v), w in zip(pairs, variables)):
        raise ValueError(
            "GradientAccumulator's transform must return the (gradient, variable) pairs it "
            "received, in the same order (%d pairs, %s); it returned %d pairs."
            % (len(variables), names(variables), len(pairs)))
    out = [g for g, _ in pairs]
    if replicas > 1:
        out = [g / float(replicas) for g in out]
    return out


def _total(strategy, variable):
    """The sum over every replica of a replica-local (SUM) variable. On one
    worker its components, each read where it is (no collective op); across
    workers the aggregated read, one scalar all-reduce (the other workers'
    components are not here)."""
    if compat.spans_workers(strategy):
        return tf.identity(variable.read_value())
    return _local_sum(strategy, variable)


def _all_reduce_sum(values):
    """The replicas' sum of each of ``values`` (replica context), back in
    every replica. (``ReplicaContext.all_reduce`` on TF 1.15 graphs looks
    its inputs' variables up by name, which replica-local ones are not:
    the merge it is made of, without that.)"""
    def merge(strategy, *per_replica):
        return strategy.extended.batch_reduce_to(
            tf.distribute.ReduceOp.SUM, [(v, v) for v in per_replica])
    return list(tf.distribute.get_replica_context().merge_call(merge, args=tuple(values)))


def _local_sum(strategy, variable):
    """The sum of a replica-local variable's components, each read on its
    own device: no collective op (cross-replica context)."""
    parts = [_read(p) for p in compat.local_results(strategy, variable)]
    return tf.add_n(parts) if len(parts) > 1 else tf.identity(parts[0])


def _where(pred, value):
    """``value`` where the scalar ``pred`` holds, else its zeros."""
    if tf.executing_eagerly():
        return value if bool(pred) else tf.zeros_like(value)
    return tf.cond(pred, lambda: tf.identity(value), lambda: tf.zeros_like(value))


def _read(variable):
    """The variable's value: eagerly a plain read (``read_value`` adds an
    identity op there, ~60 us a variable on TF 1.14)."""
    return variable.value() if tf.executing_eagerly() else variable.read_value()


def _zeros(variable):
    shape = tf.TensorShape(variable.shape)
    if shape.is_fully_defined():
        return tf.zeros(shape, variable.dtype.base_dtype)
    return tf.zeros_like(variable.read_value())


def _accum_dtype(variable):
    dtype = tf.as_dtype(variable.dtype).base_dtype
    # float16/bfloat16 sums lose precision: accumulate in float32.
    if dtype in (tf.float16, tf.bfloat16):
        return tf.float32
    return dtype
