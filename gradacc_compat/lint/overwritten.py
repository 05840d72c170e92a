"""``lint``'s GAC109 for gradients computed in a loop but added to the
sums only after it: ``for x, y in batch: grads = tape.gradient(...)``, then,
dedented, ``sums = [s + g for s, g in zip(sums, grads)]``. Each pass
overwrites ``grads``; only the last micro-batch's gradients are summed,
the others are lost.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.accumulates import label
from gradacc_compat.lint.ast_helpers import method
from gradacc_compat.lint.exprs import GRADIENT_CALLS

__all__ = ["added_after_loop"]


def added_after_loop(index, report, add, reported):
    statement = add.node
    while statement is not None and not isinstance(statement, ast.stmt):
        statement = index.parents.get(statement)
    read = set(n.id for n in ast.walk(statement) if isinstance(n, ast.Name)) \
        if statement is not None else set()
    for expr in index.sources(add.value, add.value)[1]:
        if not (isinstance(expr, ast.Call) and method(expr) in GRADIENT_CALLS):
            continue
        bound = index.parents.get(expr)
        name = bound.targets[0] if isinstance(bound, ast.Assign) and len(bound.targets) == 1 \
            else None
        if not isinstance(name, ast.Name) or name.id not in read or [
                n for _, n in index.values_of(name.id, add.node)] != [bound]:
            continue  # (``grads = tape.gradient(...)``, read by the add: its one binding)
        loop = index.loop_of(expr)
        if loop is None or index.function_of(expr) is not add.function \
                or loop.lineno > add.node.lineno \
                or any(up is loop for up in index.ancestors(add.node)):
            continue
        if ("GAC109", add.node.lineno) not in reported:
            reported.add(("GAC109", add.node.lineno))
            report(add.node, "GAC109", "the gradients are taken in the loop of line %d but "
                   "added to `%s` only after it: each pass overwrites them, so only the "
                   "loop's last micro-batch is summed" % (loop.lineno, label(add)))
        return
