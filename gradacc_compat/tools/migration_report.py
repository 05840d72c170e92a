"""``replay``'s comparison: variables matched across the two trainings, a
table per effective step and variable, the first step and variable where
they part, and the causes it can name (conventions that changed between
TF 1.x and Keras, hyperparameters, schedules, loss reduction, names,
batch-dependent layers)."""
from __future__ import absolute_import, division, print_function

import re

import numpy as np

from gradacc_compat.core import audit, optimizer_slots
from gradacc_compat.tools.conventions import explain, same_name

__all__ = ["Comparison", "match", "compare", "batch_dependent", "MatchError"]

class MatchError(ValueError):
    """The RUN's variables and this SPEC's cannot be paired."""


def _pattern(text):
    return re.compile("^" + "(.*)".join(re.escape(p) for p in text.split("*")) + "$")


def match(recorded, names, shapes, mapping=None):
    """Position of each recorded variable among ``names``: by order and shape,
    or by ``mapping`` ({"OLD": "NEW"}, ``*`` standing for the same text on
    both sides) for the names it covers. Raises MatchError listing both."""
    if len(recorded) != len(names):
        raise MatchError(_listing("the RUN has %d variables, this SPEC %d"
                                  % (len(recorded), len(names)), recorded, names, shapes))
    order = list(range(len(names)))
    for old, new in sorted((mapping or {}).items()):
        for i, var in enumerate(recorded):
            found = _pattern(old).match(var["name"])
            if not found:
                continue
            target = new
            for group in found.groups():
                target = target.replace("*", group, 1)
            if target not in names:
                raise MatchError(_listing("--map %s=%s sends %r to %r, which this SPEC does "
                                          "not have" % (old, new, var["name"], target),
                                          recorded, names, shapes))
            order[i] = names.index(target)
    if sorted(order) != list(range(len(names))):
        raise MatchError(_listing("--map sends two variables to one", recorded, names, shapes))
    for i, var in enumerate(recorded):
        if tuple(var["shape"]) != tuple(shapes[order[i]]):
            raise MatchError(_listing(
                "variable %d: the RUN's %r has shape %s, this SPEC's %r %s (matched by %s)"
                % (i, var["name"], tuple(var["shape"]), names[order[i]], tuple(shapes[order[i]]),
                   "--map" if order[i] != i else "order"), recorded, names, shapes))
    return order


def _listing(why, recorded, names, shapes):
    lines = ["Cannot pair the RUN's variables with this SPEC's: %s." % why,
             "  %-4s %-36s %-14s | %-36s %s" % ("#", "RUN", "shape", "this SPEC", "shape")]
    for i in range(max(len(recorded), len(names))):
        left = recorded[i] if i < len(recorded) else {"name": "", "shape": ""}
        lines.append("  %-4d %-36s %-14s | %-36s %s" % (
            i, left["name"], tuple(left["shape"]) if left["shape"] != "" else "",
            names[i] if i < len(names) else "", tuple(shapes[i]) if i < len(shapes) else ""))
    lines.append("Pass a map of names, e.g. --map 'dense/kernel=dense_1/kernel' (or "
                 "mapping={'dense/*': 'dense_1/*'}), when the port renamed or reordered them.")
    return "\n".join(lines)


def batch_dependent(model):
    return audit.batch_dependent_layers(model) if model is not None else []


def _diff(a, b):
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)))) \
        if np.size(a) else 0.0


class Comparison(object):
    """Rows ``(step, variable, loss record, loss replay, max|dw|, max|dslot|,
    parted)``; ``first``: the first parted row (None: they agree);
    ``causes``: what the comparison can name."""

    def __init__(self, title, rows, first, causes, notes):
        self.title, self.rows, self.first = title, rows, first
        self.causes, self.notes = causes, notes

    @property
    def passed(self):
        return self.first is None

    def __str__(self):
        lines = [self.title, "  %-4s %-28s %-12s %-12s %-9s %-9s %-10s %s" % (
            "step", "variable (RUN)", "loss RUN", "loss here", "|dloss|", "max|dw|",
            "max|dslot|", "")]
        for r in self.rows:
            lines.append("  %-4d %-28s %-12.6g %-12.6g %-9.2e %-9.2e %-10s %s" % (
                r["step"], r["variable"][:28], r["loss_run"], r["loss_here"], r["dloss"],
                r["dw"], "%.2e" % r["dslot"] if r["dslot"] is not None else "n/a",
                "PARTS" if r["parted"] else ""))
        if self.first is not None:
            lines.append("They part at effective step %d, variable %s." % (
                self.first["step"], self.first["variable"]))
            lines.append("Likely cause%s:" % ("s" if len(self.causes) > 1 else ""))
            lines.extend("  - " + c for c in (self.causes or [
                "none of the known convention changes: compare the two trainings' loss, "
                "data pipeline and optimizer arguments"]))
        if self.notes:
            lines.append("Notes:")
            lines.extend("  - " + n for n in self.notes)
        lines.append("replay %s" % ("PASSED" if self.passed else "FAILED"))
        return "\n".join(lines)


def compare(recorded, here, tolerance):
    """``recorded`` and ``here`` (Traces of the same batches), compared."""
    order = here.meta["order"]
    names = [v["name"] for v in here.meta["variables"]]
    slot_ok = _slots_comparable(recorded.meta, here.meta)
    rows, first = [], None
    for k in range(recorded.effective_steps):
        w_run, w_here = recorded.weights(k), here.weights(k)
        s_run, s_here = recorded.slots(k), here.slots(k)
        scale = max([1.0] + [float(np.max(np.abs(w))) for w in w_run if np.size(w)])
        loss_run, loss_here = recorded.step_loss(k), here.step_loss(k)
        dloss = abs(loss_run - loss_here)
        for i, var in enumerate(recorded.meta["variables"]):
            j = order[i]
            dw = _diff(w_run[i], w_here[j])
            kinds = sorted(set(s_run[i]) & set(s_here[j])) if slot_ok else []
            # A slot relative to its own size: Adam's v of small gradients is
            # tiny, and differs by as much as the gradients do, relatively.
            dslot = max([_diff(s_run[i][c], s_here[j][c]) for c in kinds]) if kinds else None
            slot_scale = max([1e-30] + [float(np.max(np.abs(s_run[i][c]))) for c in kinds
                                        if np.size(s_run[i][c])])
            parted = (dw > tolerance * scale or (dslot or 0.0) > tolerance * slot_scale
                      or dloss > tolerance * max(1.0, abs(loss_run)))
            row = dict(step=k + 1, variable=var["name"], here=names[j], loss_run=loss_run,
                       loss_here=loss_here, dloss=dloss, dw=dw, dslot=dslot, parted=parted)
            rows.append(row)
            if parted and first is None:
                first = row
    causes, notes = explain(recorded.meta, here.meta, first)
    env_run, env_here = recorded.meta["env"], here.meta["env"]
    title = ("gradacc_compat replay: RUN of Python %s, TF %s (%s, %s, %d micro-batch%s per "
             "step) replayed on Python %s, TF %s (%s, %s, %d micro-batch%s), %d effective steps"
             % (env_run["python"], env_run["tensorflow"], env_run["keras"], env_run["mode"],
                recorded.meta["steps"], "" if recorded.meta["steps"] == 1 else "es",
                env_here["python"], env_here["tensorflow"], env_here["keras"],
                env_here["mode"], here.meta["steps"], "" if here.meta["steps"] == 1 else "es",
                recorded.effective_steps))
    pairs = [(v["name"], names[order[i]]) for i, v in enumerate(recorded.meta["variables"])
             if not same_name(v["name"], names[order[i]])]
    if pairs:
        notes.insert(0, "variables paired by %s under other names: %s" % (
            "--map" if order != sorted(order) else "order and shape",
            ", ".join("%s = %s" % p for p in pairs)))
    return Comparison(title, rows, first, causes, notes)


def _slots_comparable(run, here):
    kinds = set(k for ks in run["slot_kinds"] for k in ks)
    if "momentum" not in kinds:
        return True
    return (optimizer_slots.momentum_convention(run["optimizer"]["family"])
            == optimizer_slots.momentum_convention(here["optimizer"]["family"]))
