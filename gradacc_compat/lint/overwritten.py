"""``lint``'s GAC109 for sums that keep only the loop's last micro-batch:
- gradients computed in a loop but added to the sums only after it:
  ``for x, y in batch: grads = tape.gradient(...)``, then, dedented,
  ``sums = [s + g for s, g in zip(sums, grads)]``. Each pass overwrites
  ``grads``;
- sums made anew as zeros in every pass of the loop that adds to them, and
  read after it: ``for x in batch: sums = [tf.zeros_like(v) ...]; ...;
  sums = [s + g ...]``, then ``apply_gradients(zip(sums, ...))``. Each
  pass restarts them.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.accumulates import label
from gradacc_compat.lint.ast_helpers import method
from gradacc_compat.lint.exprs import GRADIENT_CALLS

__all__ = ["added_after_loop", "restarted_each_pass"]


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


def restarted_each_pass(index, report, add, reported):
    loop = index.loop_of(add.node)
    if loop is None or not index.made_each_pass(loop, add.key, add.node) \
            or ("GAC109", add.node.lineno) in reported or not _adds_gradients(index, add):
        return
    statement = _statement(index, add.node)
    names = set([add.key]) | set(index.key(t) for t in getattr(statement, "targets", ()))
    inside = set(id(n) for n in ast.walk(loop))
    reads = [n for n in index.statements_of(add.function) if isinstance(n, _READS)
             and isinstance(n.ctx, ast.Load) and index.key(n) in names]
    after = [n for n in reads if id(n) not in inside and n.lineno > loop.lineno]
    own = set(id(n) for n in ast.walk(statement))
    later = [n for n in reads if id(n) in inside and id(n) not in own
             and n.lineno > add.node.lineno and index.key(n) == add.key
             and index.loop_of(n) is loop]
    if after and not later:
        reported.add(("GAC109", add.node.lineno))
        made = index.bound_in_pass(loop, add.key, add.node, None)[-1]
        report(made, "GAC109", "`%s` is made anew in every pass of the loop of line %d, "
               "before line %d adds to it, and read after the loop: each pass restarts the "
               "sum, so only the last micro-batch's gradients reach line %d"
               % (label(add), loop.lineno, add.node.lineno, min(n.lineno for n in after)))


_READS = (ast.Name, ast.Attribute, ast.Subscript)


def _statement(index, node):
    while node is not None and not isinstance(node, ast.stmt):
        node = index.parents.get(node)
    return node


def _adds_gradients(index, add):
    return any(isinstance(expr, ast.Call) and method(expr) in GRADIENT_CALLS
               for expr in index.sources(add.value, add.value)[1])
