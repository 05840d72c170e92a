"""``lint``'s GAC106: the gradients of each micro-batch clipped before they
are added to the sums (``clip_by_global_norm`` in the step, in a helper up
to three returns away, in a ``self.`` attribute the step sets first, or in
the one method a helper's ``acc.accumulate(grads)`` can call); the big
batch clips the mean of the sums once.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.accumulates import HELPER_ADDS, label
from gradacc_compat.lint.ast_helpers import dotted_name, method, nodes_in
from gradacc_compat.lint.exprs import loads, number

__all__ = ["clipped_each"]


def clipped_each(index, report, add, reported):
    """GAC106, once per accumulation: the clip nearest to it, up to three
    helpers' returns away (not also the clip in a helper it returns from)."""
    if not index.memo("clips", lambda: any("clip" in (method(c) or "") for c in index.calls)):
        return
    for expr in index.sources(add.value, add.value, depth=6)[1] \
            + _attributes_set_before(index, add) + _helper_methods(index, add):
        for node in nodes_in(expr):
            if isinstance(node, ast.Call) and "clip" in (method(node) or "") \
                    and not _probability_clamp(node):
                if ("GAC106", node.lineno) not in reported:
                    reported.add(("GAC106", node.lineno))
                    report(node, "GAC106", dotted_name(node.func),
                           "the accumulation into `%s`" % label(add))
                return


def _probability_clamp(call):
    """``K.clip(y_pred, 1e-8, 1 - 1e-8)``: a probability kept off 0 and 1
    before a log, in the loss; no gradient is clipped."""
    bounds = list(call.args[1:3]) + [k.value for k in call.keywords
                                     if k.arg in ("clip_value_min", "clip_value_max",
                                                  "min_value", "max_value")]
    low = number(bounds[0]) if bounds else None
    high = bounds[1] if len(bounds) > 1 else None
    one_minus = isinstance(high, ast.BinOp) and isinstance(high.op, ast.Sub) \
        and number(high.left) == 1
    return low is not None and 0 <= low < 0.01 and (one_minus or number(high) == 1)


def _helper_methods(index, add):
    """The one method of the file's classes that ``acc.accumulate(grads)``
    (a helper's add) can call: what it does to the gradients (a clip)
    happens to each micro-batch."""
    name = method(add.node) if isinstance(add.node, ast.Call) else None
    if name not in HELPER_ADDS or not isinstance(add.node.func, ast.Attribute):
        return []
    found = [f for f in index.functions if getattr(f, "name", None) == name
             and index.class_of(f) is not None]
    return found if len(found) == 1 else []


def _attributes_set_before(index, add):
    """The values given, earlier in the accumulating function, to the
    ``self.`` attributes its gradient comes by (``self._gradients = [(clip(g),
    v) ...]`` then ``acc.assign_add(gv[0]) for gv in self._gradients``)."""
    read = set(dotted_name(n) for e in index.sources(add.value, add.value)[1]
               for n in loads(e, settings=False) if isinstance(n, ast.Attribute))
    return [n.value for n in index.statements_of(add.function)
            if isinstance(n, ast.Assign) and n.lineno < add.node.lineno
            and any((dotted_name(t) or "").startswith("self.") and dotted_name(t) in read
                    for t in n.targets)] if add.function is not None else []
