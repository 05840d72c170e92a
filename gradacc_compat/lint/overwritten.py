"""``lint``'s GAC109 for sums that keep only the loop's last micro-batch:
- gradients computed in a loop but added to the sums only after it:
  ``for x, y in batch: grads = tape.gradient(...)``, then, dedented,
  ``sums = [s + g for s, g in zip(sums, grads)]``. Each pass overwrites
  ``grads``;
- sums made anew as zeros in every pass of the loop that adds to them, and
  read after it: ``for x in batch: sums = [tf.zeros_like(v) ...]; ...;
  sums = [s + g ...]``, then ``apply_gradients(zip(sums, ...))``. Each
  pass restarts them;
- sums zeroed in every pass of the loop that adds to them, after the ``if``
  that applies them but outside it: each apply holds the last micro-batch.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.accumulates import label
from gradacc_compat.lint.ast_helpers import FUNCTIONS, dotted_name, method, nodes_in
from gradacc_compat.lint.exprs import GRADIENT_CALLS, made_zero
from gradacc_compat.lint.scopes import LOOPS

__all__ = ["added_after_loop", "restarted_each_pass", "zeroed_past_gate"]


def added_after_loop(index, report, add, reported):
    statement = index.statement_of(add.node)
    read = set(n.id for n in nodes_in(statement) if isinstance(n, ast.Name)) \
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
    statement = index.statement_of(add.node)
    names = set([add.key]) | set(index.key(t) for t in getattr(statement, "targets", ()))
    inside = set(id(n) for n in nodes_in(loop))
    reads = [n for n in index.statements_of(add.function) if isinstance(n, _READS)
             and isinstance(n.ctx, ast.Load) and index.key(n) in names]
    after = [n for n in reads if id(n) not in inside and n.lineno > loop.lineno]
    own = set(id(n) for n in nodes_in(statement))
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


def zeroed_past_gate(index, report, add, reported):
    applying = [a for a in index.applies if add.key in a.keys]
    if not applying and "grad" not in label(add).lower():
        return  # (sums no apply of this file takes, and not named for gradients)
    appliers = set(id(a.function) for a in applying)
    zeroing = index.memo(("zeroing", add.key, id(add.function)), lambda: [
        n for n in index.statements_of(add.function) if _zeroes(index, n, add.key)])
    if not zeroing:
        return  # (nothing zeroes these sums where they are added)
    for loop in _loops_around(index, add.node):
        gates = [n for n in index.statements_of(loop) if isinstance(n, ast.If)
                 and index.loop_of(n) is loop and _applies_in(index, n, applying, appliers)]
        if not gates:
            continue
        gated = set(id(m) for g in gates for m in nodes_in(g))
        for node in sorted(index.statements_of(loop), key=lambda n: getattr(n, "lineno", 0)):
            if id(node) not in gated and _zeroes(index, node, add.key) \
                    and node.lineno > gates[0].lineno and not any(
                        isinstance(up, ast.If) for up in index.ancestors_to(node, loop)) \
                    and ("GAC109", node.lineno) not in reported:
                reported.add(("GAC109", node.lineno))
                report(node, "GAC109", "`%s` is zeroed in every pass of the loop of line %d, "
                       "outside the `if` of line %d that applies it: each apply holds only the "
                       "last micro-batch" % (label(add), loop.lineno, gates[0].lineno))
                return


def _loops_around(index, node):
    for up in index.ancestors(node):
        if isinstance(up, FUNCTIONS):
            return
        if isinstance(up, LOOPS):
            yield up


def _applies_in(index, statement, applying, appliers):
    """An apply of the sums in ``statement``, a call of a function that
    holds one, or of a method of another file named for applying
    (``self.apply_gradients_to_shared_network()``, a base class's)."""
    inside = set(id(n) for n in nodes_in(statement))
    calls = [n for n in nodes_in(statement) if isinstance(n, ast.Call)]
    return any(id(a.node) in inside for a in applying) or any(
        index.callee(n) is not None and id(index.callee(n)) in appliers for n in calls) or any(
        index.callee(n) is None and dotted_name(n.func).startswith("self.")
        and "applygrad" in method(n).replace("_", "").lower() for n in calls
        if dotted_name(n.func))


def _zeroes(index, node, key):
    """``sums[i] = 0.0``, ``sums = [tf.zeros_like(v) ...]``, ``s.assign(tf.zeros_like(s))``."""
    if isinstance(node, ast.Assign):
        value = node.value.elt if isinstance(node.value, ast.ListComp) else node.value
        return made_zero(value) and any(index.key(t) == key for t in node.targets)
    return isinstance(node, ast.Call) and method(node) == "assign" and node.args \
        and isinstance(node.func, ast.Attribute) and index.key(node.func.value) == key \
        and made_zero(node.args[0])


_READS = (ast.Name, ast.Attribute, ast.Subscript)


def _adds_gradients(index, add):
    return any(isinstance(expr, ast.Call) and method(expr) in GRADIENT_CALLS
               for expr in index.sources(add.value, add.value)[1])
