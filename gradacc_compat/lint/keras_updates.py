"""``lint``'s checks of Keras 2 optimizers that accumulate inside
``get_updates`` (the widely copied "AdamAccumulate"): every update of the
list runs on every micro-batch and reads the counter before this call's
``(self.iterations, self.iterations + 1)``. So ``self.iterations % N == 0``
is true at the first micro-batch (GAC109), and a bias correction on
``t = self.iterations + 1`` counts micro-batches (GAC107).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, method
from gradacc_compat.lint.exprs import modulo_tested, number

__all__ = ["get_updates"]

_COUNTER = "self.iterations"


def get_updates(index, report):
    for cls in (n for n in ast.walk(index.tree) if isinstance(n, ast.ClassDef)):
        methods = dict((f.name, f) for f in cls.body if isinstance(f, ast.FunctionDef))
        if "get_updates" not in methods:
            continue
        advanced = _advanced_first(index, cls)
        for test in (n for n in ast.walk(cls) if _modulo_test(n, (_COUNTER,))):
            if not any(up in advanced for up in index.ancestors(test)):
                report(test, "GAC109", "`%s %% N == 0` reads the count before this call's "
                       "update: true at the first micro-batch" % _COUNTER)
        updates = methods["get_updates"]
        counts = set([_COUNTER]) | set(t.id for n in ast.walk(updates) if isinstance(n, ast.Assign)
                                       and _counts_from_iterations(n.value)
                                       for t in n.targets if isinstance(t, ast.Name))
        if not any(_modulo_test(n, counts) for n in ast.walk(updates)):
            continue  # (not gated: a plain optimizer)
        for node in ast.walk(updates):
            if isinstance(node, ast.Assign) and _counts_from_iterations(node.value) \
                    and _bias_corrects(methods["get_updates"], node.targets):
                report(node, "GAC107", _COUNTER, "the gated update of get_updates (its bias "
                       "correction reads it)")


def _advanced_first(index, cls):
    """The ``with tf.control_dependencies([self.iterations.assign_add(1)])``
    blocks of the class: what they read is the advanced count."""
    return set(n for n in ast.walk(cls) if isinstance(n, ast.With) and any(
        isinstance(c, ast.Call) and method(c) == "assign_add"
        and dotted_name(c.func.value) == _COUNTER
        for item in getattr(n, "items", [n]) for c in ast.walk(item.context_expr)))


def _modulo_test(node, counters):
    """``K.equal(X % N, 0)`` (or ``==``) for X in ``counters``."""
    modulo = modulo_tested(node)
    return modulo is not None and dotted_name(modulo.left) in counters


def _counts_from_iterations(value):
    """``self.iterations + 1`` (or ``K.cast(self.iterations, ...) + 1``)."""
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) \
        and number(value.right) == 1 and any(dotted_name(n) == _COUNTER
                                             for n in ast.walk(value.left))


def _bias_corrects(function, targets):
    """A name bound to the count is raised to by ``K.pow(beta, t)``."""
    names = set(t.id for t in targets if isinstance(t, ast.Name))
    return any(isinstance(n, ast.Call) and method(n) == "pow" and len(n.args) == 2
               and isinstance(n.args[1], ast.Name) and n.args[1].id in names
               for n in ast.walk(function))
