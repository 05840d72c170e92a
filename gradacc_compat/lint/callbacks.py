"""``lint``'s GAC102 for accumulation in a Keras callback: a
``Callback`` whose batch hook sums gradients and applies them with
``self.model.optimizer.apply_gradients`` while ``fit`` runs the model's own
``train_step``, which applies the compiled optimizer on every batch too.
And a callback named for accumulating that sums nothing and applies
nothing, only returning early from a batch hook (``if step % N != 0:
return  # skip the update``): a callback cannot skip ``fit``'s update.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import FUNCTIONS, dotted_name, method, nodes_in
from gradacc_compat.lint.exprs import GRADIENT_CALLS

__all__ = ["applied_beside_fit", "skipped_by_returning"]


def _callbacks(index):
    """``(class, batch hooks)`` of the file's Keras callbacks, unless a
    model of the file steps its own way (a ``train_step``)."""
    if any(getattr(f, "name", None) == "train_step" for f in index.functions):
        return
    for cls in (c for c in index.nodes if isinstance(c, ast.ClassDef)):
        if any((dotted_name(b) or "").endswith("Callback") for b in cls.bases):
            yield cls, [f for f in cls.body if isinstance(f, FUNCTIONS[:-1])
                        and f.name.startswith("on_") and "batch" in f.name]


def applied_beside_fit(index, report):
    for cls, hooks in _callbacks(index):
        applies = [n for f in hooks for n in nodes_in(f) if isinstance(n, ast.Call)
                   and method(n) == "apply_gradients"
                   and (dotted_name(n.func) or "").startswith("self.model.")]
        sums = [a for a in index.accumulates if any(a.node is n for f in hooks
                                                    for n in nodes_in(f))]
        if not applies or not sums:
            continue
        fits = [c for c in index.calls if method(c) == "fit" and isinstance(c.func, ast.Attribute)
                and any(isinstance(n, ast.Name) for k in c.keywords if k.arg == "callbacks"
                        for n in nodes_in(k.value))]
        report(min(fits, key=lambda c: c.lineno) if fits else applies[0], "GAC102",
               sums[0].key[-1], ": `fit`'s own train step applies the compiled optimizer on "
               "every batch, and the callback `%s` applies its sums on top" % cls.name)


def skipped_by_returning(index, report):
    for cls, hooks in _callbacks(index):
        if "accumulat" not in cls.name.lower():
            continue
        calls = [method(n) for n in nodes_in(cls) if isinstance(n, ast.Call)]
        if any(c in GRADIENT_CALLS + ("apply_gradients", "assign_add") for c in calls):
            continue  # (it sums or applies something of its own)
        returns = [n for f in hooks for n in nodes_in(f) if isinstance(n, ast.Return)
                   and any(isinstance(up, ast.If) for up in index.ancestors(n))]
        if returns:
            report(returns[0], "GAC102", cls.name, ": a callback cannot skip `fit`'s update by "
                   "returning from `%s`; `fit` applies the compiled optimizer on every "
                   "batch" % index.function_of(returns[0]).name)
