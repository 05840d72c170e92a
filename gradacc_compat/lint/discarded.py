"""``lint``'s GAC101 for a mean that is computed and thrown away:
``average_grads(grads, n)`` as a statement of its own, where the function
(of this file) returns the divided gradients instead of dividing them in
place, then ``apply_gradients(zip(grads, ...))`` applies the sums. And
GAC109 for a reset written as a comparison: ``batch_idx == 0`` as a
statement of its own, where ``batch_idx`` is the count an ``if`` tests to
restart or add to the sums: it compares and is thrown away, the count
never returns to 0 and the sums are never restarted.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.accumulates import label
from gradacc_compat.lint.ast_helpers import method, nodes_in, parameter_names
from gradacc_compat.lint.exprs import is_division, number

__all__ = ["thrown_away_means", "thrown_away_resets"]


def thrown_away_means(index, report):
    for statement in (n for n in index.nodes if isinstance(n, ast.Expr)):
        call = statement.value
        if not isinstance(call, ast.Call) or not call.args \
                or not isinstance(call.args[0], ast.Name):
            continue
        callee = index.callee(call)
        if callee is None or not _returns_divided(index, callee):
            continue
        name = call.args[0].id
        function = index.function_of(statement)
        for apply in index.applies:
            if apply.function is function and apply.node.lineno > statement.lineno and any(
                    isinstance(n, ast.Name) and n.id == name for n in nodes_in(apply.node)):
                report(apply.node, "GAC101", name)
                break


def _returns_divided(index, function):
    """Returns something, divides, and assigns nothing into its arguments
    (a new list, not the caller's gradients divided in place)."""
    params = set(parameter_names(function))
    nodes = index.statements_of(function)
    returns = [n for n in nodes if isinstance(n, ast.Return) and n.value is not None]
    in_place = any(isinstance(n, (ast.Assign, ast.AugAssign)) and any(
        isinstance(t, ast.Subscript) and getattr(t.value, "id", None) in params
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])) for n in nodes) \
        or any(isinstance(n, ast.Call) and method(n) in ("assign", "assign_sub")
               for n in nodes)
    return bool(returns) and not in_place and any(
        is_division(n) for n in nodes if isinstance(n, ast.expr))


def thrown_away_resets(index, report):
    for statement in (n for n in index.nodes if isinstance(n, ast.Expr)):
        test = statement.value
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Eq) and isinstance(test.left, ast.Name)
                and number(test.comparators[0]) is not None):
            continue
        name = test.left.id
        gated = [a for a in index.accumulates if any(
            isinstance(n, ast.Name) and n.id == name for _, t in index.guards(a.node)
            for n in nodes_in(t))]
        if gated:
            report(statement, "GAC109", "`%s == %s` compares and is thrown away: `%s` is "
                   "never set back, so the sums `%s` are never restarted"
                   % (name, number(test.comparators[0]), name, label(gated[0])))
