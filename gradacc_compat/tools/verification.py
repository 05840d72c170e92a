"""``gac.verify``: exactness on
your own model, in every mode and strategy this TensorFlow offers.

    report = gac.verify(model=make_model,                       # or a built model
                        optimizer=lambda: tf.keras.optimizers.Adam(1e-3),
                        batch=(x, y), steps=4, loss="mse")
    report.passed

``batch`` is ONE effective batch of N*b examples. Each row trains
``effective_steps`` steps on it twice from the same initial weights: once
with ``GradientAccumulator(steps)`` on its ``steps`` micro-batches of b, once
on the whole batch, and prints the largest difference of the weights and of
the optimizer's state. Under MirroredStrategy (two logical CPUs) every
micro-batch is split over the replicas and compared with the big batch
trained without a strategy.

The model comes as a Keras model, a function that builds one (needed for the
strategy rows and for TF1 graphs, where each row builds its own graph), or as
``loss=fn(x, y)`` with ``variables=[...]``. Initial weights are copied from
the first build, so a randomly initialized factory is fine.
"""
from __future__ import absolute_import, division, print_function

import numpy as np

from gradacc_compat import compat
from gradacc_compat.core import audit, families
from gradacc_compat.tools import testing
from gradacc_compat.tools import spec
from gradacc_compat.core.accumulator import GradientAccumulator
from gradacc_compat.compat import tf

__all__ = ["verify", "Report", "assert_matches_big_batch"]

TOLERANCE = 1e-5
_MODE_LABEL = {"eager": "eager", "function": "tf.function", "graph": "TF1 graph"}
MIRRORED = "MirroredStrategy x%d" % testing.REPLICAS


class Row(object):
    """One comparison: optimizer, mode, strategy, differences, verdict."""

    def __init__(self, optimizer, mode, strategy, weights=None, state=None, passed=None,
                 note=""):
        self.optimizer, self.mode, self.strategy = optimizer, mode, strategy
        self.weights, self.state, self.passed, self.note = weights, state, passed, note

    @property
    def skipped(self):
        return self.passed is None

    def as_dict(self):
        return dict(self.__dict__)


class Report(object):
    """The rows of a verify run. ``passed``: every row that ran passed (and
    at least one ran); ``hints``: what to do about a FAIL."""

    def __init__(self, title, rows, hints=(), notes=()):
        self.title, self.rows, self.hints = title, list(rows), list(hints)
        self.notes = list(notes)  # said whatever the verdict

    @property
    def passed(self):
        ran = [r for r in self.rows if not r.skipped]
        return bool(ran) and all(r.passed for r in ran)

    def __str__(self):
        lines = [self.title, "  %-38s %-11s %-20s %-10s %-11s %s" % (
            "optimizer", "mode", "strategy", "max|dw|", "max|dstate|", "result")]
        for r in self.rows:
            if r.skipped:
                lines.append("  %-38s %-11s %-20s %-22s SKIP  %s" % (
                    r.optimizer, _MODE_LABEL.get(r.mode, r.mode), r.strategy, "", r.note))
            else:
                lines.append("  %-38s %-11s %-20s %-10.2e %-11.2e %s%s" % (
                    r.optimizer, _MODE_LABEL.get(r.mode, r.mode), r.strategy, r.weights,
                    r.state, "PASS" if r.passed else "FAIL", ("  " + r.note) if r.note else ""))
        if self.notes:
            lines.append("Notes:")
            lines.extend("  - " + n for n in self.notes)
        if not self.passed:
            lines.append("What to do:")
            lines.extend("  - " + h for h in self.hints)
        lines.append("verify %s" % ("PASSED" if self.passed else "FAILED"))
        return "\n".join(lines)


# ----------------------------------------------------------------- runs
def _train(subject, make_optimizer, x, y, micro, effective_steps, mode, distributed):
    """Weights and optimizer state after ``effective_steps`` effective steps."""
    with testing.Runner(mode, distributed) as run:
        variables, weights, loss_fn, _ = subject.build(x[:1])
        run.initialize()
        values = run.values(weights)
        if subject.initial is None:
            subject.initial = values
        else:
            run.run(lambda: tf.group(*[w.assign(v) for w, v in zip(weights, subject.initial)]))
        optimizer = make_optimizer()
        acc = GradientAccumulator(micro) if micro > 1 else None
        replicas = run.replicas

        def replica_fn(xb, yb):
            xs, ys = testing.replica_slice(xb), testing.replica_slice(yb)
            grads = testing.gradients(lambda: loss_fn(xs, ys) / float(replicas), variables)
            if acc is None:
                return optimizer.apply_gradients(list(zip(grads, variables)))
            return acc.step(optimizer, grads, variables)

        b = len(x) // micro
        step = run.compile(replica_fn, x[:b], y[:b])
        for _ in range(effective_steps):
            for i in range(0, len(x), b):
                step(x[i:i + b], y[i:i + b])
        return (run.values(variables),
                run.values(testing.optimizer_state(optimizer, variables)))


def _max_diff(a, b):
    if len(a) != len(b):
        return float("inf")
    return max([float(np.max(np.abs(np.asarray(p, np.float64) - np.asarray(q, np.float64))))
                if np.size(p) else 0.0 for p, q in zip(a, b)] or [0.0])


def _graph_refusal(make_optimizer, mode):
    """Why this optimizer family cannot run in ``mode`` (None: it can)."""
    if not compat.eager_by_default() or mode == "graph":
        adapter = families.adapter_for(make_optimizer())
        if not adapter.works_in_graph:
            return "this optimizer family does not run in TF1 graphs (%s)" % adapter.name
    return None


def _row(subject, label, make_optimizer, x, y, steps, effective_steps, mode, distributed,
         tolerance, big):
    """Accumulation against ``big``, the big batch's (weights, state)."""
    strategy = MIRRORED if distributed else "default"
    big_w, big_s = big
    acc_w, acc_s = _train(subject, make_optimizer, x, y, steps, effective_steps, mode,
                          distributed)
    dw, ds = _max_diff(acc_w, big_w), _max_diff(acc_s, big_s)
    scale = max([1.0] + [float(np.max(np.abs(w))) for w in big_w if np.size(w)])
    return Row(label, mode, strategy, dw, ds, dw <= tolerance * scale and ds <= tolerance * scale)


def verify(model=None, optimizer=None, batch=None, steps=4, loss="mse", variables=None,
           effective_steps=2, tolerance=TOLERANCE, modes=None, distributed=None,
           print_fn=print, _strategy_rows_only=False):
    """Compare accumulation with the big batch on your model; returns a Report.

    Args:
      model: a Keras model, a function returning a new one, or None with
        ``loss`` and ``variables``; None for all three: a built-in model.
      optimizer: a function returning a new optimizer, or {label: function}.
      batch: ``(x, y)``, one effective batch (``steps`` micro-batches).
      steps: micro-batches per applied update.
      loss: a Keras loss (name or object) or ``fn(y_true, y_pred)`` for a
        model; ``fn(x, y)`` (a scalar mean) with ``variables``.
      effective_steps: updates per row.
      tolerance: largest difference allowed, relative to max(1, max |w|).
      modes: some of "eager", "function", "graph"; default: all available.
      distributed: True/False; None runs MirroredStrategy rows where this
        process has two logical CPUs and the model can be rebuilt.
      print_fn: where the table goes (None: not printed).
    """
    if model is None and variables is None and batch is None:
        model, optimizer, batch, loss = spec.builtin(optimizer)
    subject = spec.Subject(model, loss if (model is not None or callable(loss)) else None,
                       variables)
    x, y = spec.check_batch(batch, steps)
    optimizers = spec.optimizers(optimizer)
    modes = tuple(modes or testing.available_modes())
    strategies = [] if _strategy_rows_only else [False]
    skip_distributed = None
    if distributed is not False:
        skip_distributed = _why_not_distributed(subject, len(x) // steps)
        if skip_distributed is None:
            strategies.append(True)
        elif distributed:
            raise ValueError("verify(distributed=True): %s." % skip_distributed)
    rows = []
    for label, make in optimizers:
        for mode in modes:
            if mode == "graph" and not subject.rebuildable:
                rows.append(Row(label, mode, "default", note="a TF1 graph needs `model` as a "
                                "function that builds it"))
                continue
            refused = _graph_refusal(make, mode)
            # The big batch runs once per optimizer and mode, without a strategy.
            big = None if refused or not strategies else \
                _train(subject, make, x, y, 1, effective_steps, mode, False)
            for dist in strategies:
                rows.append(Row(label, mode, MIRRORED if dist else "default", note=refused)
                            if refused else
                            _row(subject, label, make, x, y, steps, effective_steps, mode,
                                 dist, tolerance, big))
            if skip_distributed and distributed is None:
                rows.append(Row(label, mode, MIRRORED, note=skip_distributed))
    report = Report(_title(steps, effective_steps, len(x) // steps), rows, _hints(subject),
                    _schedule_notes(optimizers, steps))
    if print_fn is not None:
        print_fn(str(report))
    return report


def assert_matches_big_batch(model=None, optimizer=None, batch=None, steps=4, loss="mse",
                             variables=None, effective_steps=2, tolerance=1e-5, modes=None,
                             distributed=None):
    """``gac.verify`` as an assertion: raises ``AssertionError`` with the
    table when accumulation does not give the big batch's weights and
    optimizer state (arguments as ``gac.verify``). Returns the report."""
    report = verify(model=model, optimizer=optimizer, batch=batch, steps=steps, loss=loss,
                    variables=variables, effective_steps=effective_steps,
                    tolerance=tolerance, modes=modes, distributed=distributed, print_fn=None)
    if not report.passed:
        raise AssertionError("accumulation differs from the big batch:\n%s" % report)
    return report


def _schedule_notes(optimizers, steps):
    """What a learning rate that counts steps means under accumulation."""
    notes = []
    for label, make in optimizers:
        try:
            made = make()
            lr = families.adapter_for(made).raw_learning_rate(made)
        except Exception:  # noqa: BLE001 - the rows report what fails
            continue
        if any(c.__name__ == "LearningRateSchedule" for c in type(lr).__mro__):
            notes.append(
                "%s: the learning rate is a schedule (%s) on the optimizer's step count; "
                "wrapped, that count advances once per effective step, as on the big batch "
                "(the rows check it). Count the schedule's steps (decay steps, warmup, "
                "total steps) in effective steps: from the effective batch of %d "
                "micro-batches, not from the micro-batch (BERT's num_train_steps and "
                "warmup proportion)." % (label, type(lr).__name__, steps))
        elif callable(lr) or isinstance(lr, tf.Tensor):  # (a Variable is a constant)
            notes.append(
                "%s: the learning rate is a %s: where it reads a step counter, key it on "
                "one that counts effective steps (a wrapped Keras optimizer's iterations; "
                "the global_step given to a wrapped v1 optimizer; in a v1 "
                "DNNLinearCombined* estimator, global_step // %d) and count its steps in "
                "effective steps." % (label, "function" if callable(lr) else "tensor", steps))
    return notes


def _why_not_distributed(subject, micro_batch):
    if not subject.rebuildable:
        return "needs `model` as a function that builds it (under the strategy)"
    if micro_batch % testing.REPLICAS:
        return "micro-batch of %d does not split over %d replicas" % (micro_batch,
                                                                      testing.REPLICAS)
    if testing.logical_cpus() < testing.REPLICAS:
        return ("needs %d logical CPUs: call gradacc_compat.tools.testing.setup_logical_cpus() "
                "before any TF op, or use `python -m gradacc_compat verify`"
                % testing.REPLICAS)
    return None


def _title(steps, effective_steps, micro_batch):
    return ("gradacc_compat verify on TensorFlow %s (%s): %d effective steps of %d "
            "micro-batches of %d vs the big batch of %d"
            % (compat.TF_VERSION_STRING, compat.KERAS_FLAVOUR, effective_steps, steps,
               micro_batch, steps * micro_batch))


def _hints(subject):
    found = audit.batch_dependent_layers(subject.last_model) if subject.last_model else []
    hints = audit.explain(found)
    hints.append("the loss must be a MEAN over the batch (a sum over it makes every "
                 "micro-batch's gradient 1/N of its share; use reduction='sum' then)")
    hints.append("anything else in the step that depends on the batch (a custom loss "
                 "normalized by its own batch statistics) differs the same way")
    return hints
