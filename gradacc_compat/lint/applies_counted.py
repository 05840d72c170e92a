"""``lint``'s GAC109 for a gate on the count of the optimizer's own
applies: ``if (self.optimizer.iterations + 1) % N == 0:
self.optimizer.apply_gradients(...)`` in a Keras ``train_step``. The
optimizer's ``iterations`` moves only when it applies, so the gate waits
on itself: with ``+ 1`` the apply never runs, without it runs once (at 0)
and never again. The micro-step needs a counter of its own.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, method, nodes_in
from gradacc_compat.lint.exprs import number

__all__ = ["waits_on_itself"]


def waits_on_itself(index, test, apply):
    """Why ``test`` never (or always) lets ``apply`` run, or None."""
    func = apply.node.func
    receiver = dotted_name(func.value) if isinstance(func, ast.Attribute) else None
    cls = index.class_of(test)
    if not receiver or cls is not None and any(
            (dotted_name(b) or "").endswith("Optimizer") for b in cls.bases):
        return None  # (an optimizer's own apply_gradients counts every call)
    counter = receiver + ".iterations"
    read = [test] + [value for n in nodes_in(test) if isinstance(n, ast.Name)
                     for value, _ in index.values_of(n.id, test)]
    if not any(dotted_name(n) == counter for e in read for n in nodes_in(e)):
        return None
    if any(isinstance(c.func, ast.Attribute) and method(c) in ("assign_add", "assign")
           and dotted_name(c.func.value) == counter for c in index.calls):
        return None  # (advanced by hand on each micro-step)
    ahead = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add) and number(n.right) == 1
                for e in read for n in nodes_in(e))
    return "`%s` counts the applies, and the apply waits on it: %s" % (
        counter, "`(iterations + 1) % N == 0` never holds for N > 1, so it never applies"
        if ahead else "`iterations % N == 0` holds at 0 only: it applies once, then never")
