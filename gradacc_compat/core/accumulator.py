"""Exact gradient accumulation for custom training loops."""
from __future__ import absolute_import, division, print_function

from gradacc_compat import compat
from gradacc_compat.compat import tf
from gradacc_compat.core import families, horovod_support
from gradacc_compat.core import accumulator_writes as writes
from gradacc_compat.core.accumulator_apply import apply_if
from gradacc_compat.core.accumulator_ops import (TF1_COLLECTIVES as _TF1_COLLECTIVES,
                                                 check_not_wrapped as _check_not_wrapped,
                                                 is_default as _is_default, read as _read)
from gradacc_compat.core.accumulator_state import (AGG as _AGG, Cycle as _Cycle,
                                                   PlainState as _PlainState, once_per_strategy)
from gradacc_compat.core.checks import (check_nonfinite, check_reduction, check_steps,
                                        check_transform)

__all__ = ["GradientAccumulator"]


def _read_only(name, doc):
    """A property that returns the attribute ``name``."""
    return property(lambda self: getattr(self, name), doc=doc)


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
        # The writes and the apply are functions of this cycle (see
        # accumulator_state.Cycle); the variables stay attributes of this
        # module, where checkpoints name them.
        self._cycle = _Cycle(self._plain, steps, reduction, nonfinite, self._transform,
                             (self._micro_step, self._iterations, self._weight_total,
                              self._skipped), self._track)
        self._accums = None

    def _track(self, name, value):
        """``value`` as the checkpointed attribute ``_<name>``; returns the
        tracked container (``tf.Module`` wraps lists and dicts)."""
        setattr(self, "_" + name, value)
        return getattr(self, "_" + name)

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
    steps = _read_only("_steps", "Micro-batches per applied update.")
    reduction = _read_only("_reduction", '"mean" or "sum": what a cycle applies.')
    transform = _read_only("_transform", """The function run on the accumulated
        gradient before the apply, or None (``clip_global_norm`` makes one).""")
    nonfinite = _read_only("_nonfinite", """What a cycle with an inf/NaN gradient
        does: "apply" (the big batch's result), "skip" (dropped, counted in
        :attr:`skipped`) or "raise" (the micro-step raises before any state
        changes).""")
    skipped = _read_only("_skipped", """Cycles dropped for inf/NaN
        (``nonfinite="skip"``: an int64 variable; else None).""")
    micro_step = _read_only("_micro_step", """Micro-batches pending in this cycle
        (an int64 variable).""")
    iterations = _read_only("_iterations", """Cycles handed to the optimizer so far
        (an int64 variable): its effective steps, except that a
        LossScaleOptimizer may still skip one (its own ``iterations`` then
        lags); cycles dropped by ``nonfinite="skip"`` are counted in
        :attr:`skipped`, not here.""")

    def pending_count(self):
        """This replica's pending micro-batch count (an int64 tensor; in a
        TF1 graph, an op to run)."""
        return _read(self._cycle.local(self._micro_step))

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
        return self._cycle.built

    @property
    def gradients(self):
        """What is pending: per variable, the sum of this cycle's (weighted)
        gradients as a tensor -- zeros after an apply or :meth:`reset`, and
        for a variable that got no gradient this cycle. None before the
        first ``step``/``accumulate``. (In a TF1 graph each read builds the
        ops that compute it: run them.) Under a strategy, in replica context
        it is this replica's sum; in cross-replica context, all replicas'.
        """
        if not self._cycle.built:
            return None
        return writes.pending(self._cycle)

    # ------------------------------------------------------------- public
    @compat.do_not_convert  # (AutoGraph would convert the checks it calls)
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
        cycle = self._cycle
        if compat.collectives_in_tf1_graph(self._plain.strategy):
            raise NotImplementedError(_TF1_COLLECTIVES % (type(self._plain.strategy).__name__,))
        dense = writes.rows_as_dense(cycle, adapter, optimizer, reduce)
        count, known = writes.accumulate(cycle, gradients, variables, weight, dense,
                                         self._compact_rows and dense)
        steps = self._steps
        if known is not None and known < steps and _is_default(self._plain.strategy):
            return tf.constant(False)  # eager, one device: the host knows
        # A variable with a gradient now is in this cycle for sure; one
        # passed None may or may not be (other calls may have fed it).
        guarded = [i for i, g in enumerate(gradients) if g is None]
        return apply_if(cycle, adapter, optimizer, count, lambda c: tf.greater_equal(c, steps),
                        apply_fn, reduce, guarded)

    def accumulate(self, gradients, variables, weight=None):
        """Adds one micro-batch's gradients. Returns the pending micro-step count."""
        return writes.accumulate(self._cycle, gradients, variables, weight)[0]

    @compat.do_not_convert
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
        if not self._cycle.built:  # nothing was ever accumulated
            return tf.constant(False)
        # Host code (an epoch-end callback, say) may call this outside the
        # strategy's scope: enter it, the apply is cross-replica then.
        with compat.strategy_scope(self._plain.strategy):
            return apply_if(self._cycle, adapter, optimizer, None, lambda c: tf.greater(c, 0),
                            apply_fn, reduce, sorted(self._plain.ever_none))

    def flush(self, optimizer):
        """Applies a partial cycle (end of an epoch) with correct weighting.

        Same as :meth:`apply_gradients`: the divisor is the number of pending
        micro-batches (or their total weight), not ``steps``.
        """
        return self.apply_gradients(optimizer)

    @compat.do_not_convert
    def reset(self):
        """Drops what is pending (accumulated gradients and counts)."""
        return tf.group(*self._cycle.reset_ops(self._cycle.components))

    # ------------------------------------------- for wrappers and engines
    def state_variables(self):
        """Every variable that holds a pending cycle, in a fixed order: the
        accumulators (in the model variables' order), the counters, then the
        row marks of the sparse variables (in the model variables' order)."""
        return self._cycle.state_variables()

    @property
    def sparse_indices(self):
        """Positions (in the variable list) whose accumulator marks the rows a
        cycle touched: the variables that received ``tf.IndexedSlices``."""
        return sorted(int(k) for k in (self._cycle.rows or {}))

    def build(self, variables, sparse=()):
        """Creates the accumulators (once, whichever replica asks first) and
        the row marks of the variables at positions ``sparse`` (a Keras
        wrapper that loads a saved model makes its state up front)."""
        writes.build(self._cycle, variables, sparse)
