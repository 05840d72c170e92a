"""``gac.record`` and ``gac.replay``: prove a migration across TensorFlow
versions. ``record`` trains K effective steps of a SPEC (``verify``'s forms)
and writes a RUN file: initial weights, input batches, per-micro-step
losses and gradient norms, per-effective-step weights, optimizer slots and
learning rates, and the environment. ``replay`` loads the RUN's initial
weights into another SPEC's variables (by order and shape, or by ``mapping``),
feeds the same batches, trains the same K effective steps and compares
(``migration_report``). The two run in separate processes, on any two TF
versions of the matrix: the RUN file is all they share.

    gac.record("run.npz", model=make_model, optimizer=lambda: Adam(1e-3),
               batch=(x, y), steps=1, effective_steps=3)        # TF 1.14
    gac.replay("run.npz", model=make_keras_model, optimizer=..., steps=4)  # TF 2.21
"""
from __future__ import absolute_import, division, print_function

import os
import platform

import numpy as np

from gradacc_compat import compat
from gradacc_compat.compat import tf
from gradacc_compat.core import families
from gradacc_compat.core.accumulator import GradientAccumulator
from gradacc_compat.tools import migration_report, runfile, spec, testing

__all__ = ["record", "replay", "Trace"]


class Trace(object):
    """What one training did: names, shapes and values of the variables,
    batches, losses, gradient norms, weights, slots, learning rates."""

    def __init__(self, meta, arrays):
        self.meta, self.arrays = meta, arrays

    @property
    def effective_steps(self):
        return int(self.meta["effective_steps"])

    def weights(self, step):
        return [self.arrays["w.%d.%d" % (step, i)] for i in range(len(self.meta["variables"]))]

    def slots(self, step):
        """``[{kind: array}]`` per variable after effective step ``step``."""
        return [dict((kind, self.arrays["s.%d.%d.%s" % (step, i, kind)]) for kind in kinds)
                for i, kinds in enumerate(self.meta["slot_kinds"])]

    def step_loss(self, step):
        """The effective step's loss: the mean of its micro-batches'."""
        return float(np.mean(self.arrays["loss.%d" % step]))


def _builtin():
    model, _, batch, loss = spec.builtin()
    keras = compat.keras_module()
    return dict(model=model, batch=batch, loss=loss,
                optimizer=lambda: keras.optimizers.Adam(0.01, epsilon=1e-7))


def _spec_kwargs(kwargs):
    kwargs = dict(kwargs)
    if kwargs.get("model") is None and kwargs.get("variables") is None:
        builtin = _builtin()
        for key, value in builtin.items():
            if kwargs.get(key) is None:
                kwargs[key] = value
    if isinstance(kwargs.get("optimizer"), dict) or not callable(kwargs.get("optimizer")):
        raise TypeError("record/replay need ONE optimizer: `optimizer` must be a function "
                        "that returns a new optimizer (a dict of them is verify's form); "
                        "received %r." % (kwargs.get("optimizer"),))
    return kwargs


def _batches(batch, effective_steps):
    """``batch``: one effective batch (reused every step) or a list of them."""
    if isinstance(batch, list) and batch and isinstance(batch[0], (tuple, list)):
        if len(batch) < effective_steps:
            raise ValueError("%d effective batches given for effective_steps=%d."
                             % (len(batch), effective_steps))
        return [tuple(np.asarray(a) for a in b) for b in batch[:effective_steps]]
    return [tuple(np.asarray(a) for a in batch)] * effective_steps


def _names(variables):
    """Variable names without ``:0`` (Keras 3: the path)."""
    return [(getattr(v, "path", None) or v.name).split(":")[0] for v in variables]


def _learning_rate(adapter, optimizer, done, run):
    """The learning rate of the next apply, after ``done`` effective steps
    (None where the optimizer does not say)."""
    raw = adapter.raw_learning_rate(optimizer)
    if raw is None:
        raw = adapter.hyperparameters(optimizer).get("learning_rate")
        return raw if isinstance(raw, float) else None
    try:
        if callable(raw) and hasattr(raw, "get_config"):  # a schedule
            raw = raw(done)
        elif callable(raw):
            raw = raw()
        return float(run.value(raw))
    except Exception:  # noqa: BLE001 - a learning rate this cannot read is left out
        return None


def train(kwargs, steps, effective_steps, mode, batches, initial=None, match=None):
    """Trains; returns a Trace. ``initial``: the weights to start from, placed
    by ``match(names, shapes)``, which returns each one's position among the
    variables built here (the order is kept in the trace's meta)."""
    subject = spec.Subject(kwargs.get("model"), kwargs.get("loss", "mse"),
                           kwargs.get("variables"))
    make_optimizer = kwargs["optimizer"]
    for x, y in batches:
        spec.check_batch((x, y), steps)
    with testing.Runner(mode) as run:
        variables, _, loss_fn, model = subject.build(batches[0][0][:1])
        run.initialize()
        order = None
        if initial is not None:
            order = match(_names(variables), [tuple(int(d) for d in v.shape) for v in variables])
            placed = [None] * len(variables)
            for value, at in zip(initial, order):
                placed[at] = value
            run.run(lambda: tf.group(*[v.assign(value) for v, value in zip(variables, placed)]))
        optimizer = make_optimizer()
        adapter = families.adapter_for(optimizer)
        acc = GradientAccumulator(steps) if steps > 1 else None

        def micro_step(xb, yb):
            loss, grads = testing.loss_and_gradients(lambda: loss_fn(xb, yb), variables)
            applied = (optimizer.apply_gradients(list(zip(grads, variables))) if acc is None
                       else acc.step(optimizer, grads, variables))
            # (in a TF1 graph the outputs must wait for the apply; a function
            # orders its stateful ops itself)
            with tf.control_dependencies([applied] if mode == "graph" else []):
                return [tf.identity(loss),
                        tf.linalg.global_norm([g for g in grads if g is not None])]

        b = len(batches[0][0]) // steps
        step = run.compile(micro_step, batches[0][0][:b], batches[0][1][:b], outputs=True)
        arrays = dict(("init.%d" % i, v) for i, v in enumerate(run.values(variables)))
        kinds, lrs = None, []
        for k, (x, y) in enumerate(batches):
            arrays["x.%d" % k], arrays["y.%d" % k] = x, y
            lrs.append(_learning_rate(adapter, optimizer, k, run))
            out = [step(x[i:i + b], y[i:i + b]) for i in range(0, len(x), b)]
            arrays["loss.%d" % k] = np.array([o[0] for o in out], np.float64)
            arrays["gnorm.%d" % k] = np.array([o[1] for o in out], np.float64)
            for i, value in enumerate(run.values(variables)):
                arrays["w.%d.%d" % (k, i)] = value
            slots = [adapter.slots(optimizer, v) for v in variables]
            kinds = [sorted(s) for s in slots]
            for i, s in enumerate(slots):
                for kind in s:
                    arrays["s.%d.%d.%s" % (k, i, kind)] = run.value(s[kind])
        meta = {
            "variables": [{"name": n, "shape": list(map(int, v.shape)),
                           "dtype": tf.as_dtype(v.dtype).base_dtype.name}
                          for n, v in zip(_names(variables), variables)],
            "steps": steps, "effective_steps": effective_steps, "micro_batch": b,
            "slot_kinds": kinds, "learning_rates": lrs,
            "optimizer": {"class": type(optimizer).__name__, "family": adapter.name,
                          "hyperparameters": adapter.hyperparameters(optimizer)},
            "loss": kwargs.get("loss") if isinstance(kwargs.get("loss"), str) else
            getattr(kwargs.get("loss"), "__name__", type(kwargs.get("loss")).__name__),
            "batch_dependent": [list(f) for f in migration_report.batch_dependent(model)],
            "env": environment(mode), "order": order,
            "first_loss": float(np.mean(arrays["loss.0"])),
        }
        return Trace(meta, arrays)


def environment(mode):
    """Where the run ran. Seeds do not decide it (the initial weights and
    the batches are recorded); the ones set are kept for the record."""
    graph_seed = getattr(tf.compat.v1.get_default_graph(), "seed", None)
    return {"python": platform.python_version(), "tensorflow": compat.TF_VERSION_STRING,
            "keras": compat.KERAS_FLAVOUR, "mode": mode, "strategy": "default",
            "numpy": np.__version__,
            "seeds": {"tf_graph": graph_seed,
                      "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED")}}


def record(out, model=None, optimizer=None, batch=None, steps=1, loss=None, variables=None,
           effective_steps=3, mode=None):
    """Trains ``effective_steps`` effective steps of ``steps`` micro-batches
    and writes the run to ``out``; returns its Trace. Without model,
    variables and batch: ``verify``'s built-in model with Keras Adam."""
    kwargs = _spec_kwargs(dict(model=model, optimizer=optimizer, batch=batch, loss=loss,
                               variables=variables))
    mode = mode or testing.available_modes()[0]
    trace = train(kwargs, steps, effective_steps, mode,
                  _batches(kwargs["batch"], effective_steps))
    runfile.write(out, trace.meta, trace.arrays)
    return trace


def replay(against, model=None, optimizer=None, steps=None, loss=None, variables=None,
           mode=None, mapping=None, tolerance=1e-5, print_fn=print):
    """Replays the RUN file ``against`` on this SPEC and compares; returns a
    ``migration_report.Comparison`` (``.passed``; ``str()`` is the table).
    ``steps``: micro-batches per effective step (default: the record's);
    ``mapping``: ``{"OLD": "NEW"}`` name patterns (``*`` matches alike)."""
    meta, arrays = runfile.read(against)
    recorded = Trace(meta, arrays)
    kwargs = _spec_kwargs(dict(model=model, optimizer=optimizer, loss=loss,
                               variables=variables, batch=(arrays["x.0"], arrays["y.0"])))
    mode = mode or testing.available_modes()[0]
    steps = int(steps or meta["steps"])
    batches = [(arrays["x.%d" % k], arrays["y.%d" % k]) for k in range(recorded.effective_steps)]
    initial = [arrays["init.%d" % i] for i in range(len(meta["variables"]))]
    trace = train(kwargs, steps, recorded.effective_steps, mode, batches, initial,
                  lambda names, shapes: migration_report.match(meta["variables"], names, shapes,
                                                               mapping))
    comparison = migration_report.compare(recorded, trace, tolerance)
    if print_fn is not None:
        print_fn(str(comparison))
    return comparison

