"""``lint``'s GAC102 for an apply op built before the ``tf.cond`` that
should gate it: ``opt_apply = opt.apply_gradients(...)`` then
``tf.cond(accu, lambda: opt_apply, lambda: opt_compute)``. The branch only
returns the op; the op was made outside the branch function, so it runs
on every micro-step whichever way the predicate goes (in a TF1 graph as in
a ``tf.function``, and at once when eager). The apply must be built inside
the branch function.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, method, nodes_in
from gradacc_compat.lint.branches import cond_branches

__all__ = ["applies_outside_branch"]

_APPLIES = ("apply_gradients", "minimize")


def applies_outside_branch(index, report):
    for call in (c for c in index.calls if method(c) == "cond"):
        found = [(name, v) for branch in cond_branches(call) if isinstance(branch, ast.Lambda)
                 for name in nodes_in(branch.body) if isinstance(name, ast.Name)
                 for v, _ in index.values_of(name.id, branch)
                 if method(v) in _APPLIES and isinstance(v.func, ast.Attribute)]
        if found:
            name, built = found[0]
            report(call, "GAC102", dotted_name(built.func.value) or "the sums",
                   ": `%s` is built outside the tf.cond branch, so it runs whichever way the "
                   "test goes" % name.id)
