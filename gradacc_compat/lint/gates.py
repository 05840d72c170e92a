"""``lint``'s GAC109 for gates that do not test what they mean:

* identity with an object made on the spot: ``if sums[0] is not
  tf.zeros_like(v):`` before the flush after an epoch is always true, so
  the apply runs whether or not anything is left to apply (with ``is``,
  never). A tensor compares by value, not by ``is``;
* a bare modulo, ``if step % N:``, is true when the step is *not* a
  multiple of N: the apply runs on N - 1 micro-batches of every N.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, last_line, nodes_in
from gradacc_compat.lint.exprs import counts_epochs, literal
from gradacc_compat.lint.traced import traced_functions

__all__ = ["always_true", "frozen", "misread"]


def misread(index, test, adds):
    """Why ``test`` does not gate one apply per N micro-batches, or None.
    (A bare modulo only as the gate of the loop that adds ``adds``: after
    it, ``if (step + 1) % N:`` asks whether a partial cycle is left.)"""
    loop = index.loop_of(test)
    modulo = next((p for p in (test.values if isinstance(test, ast.BoolOp) and isinstance(
        test.op, ast.And) else [test]) if isinstance(p, ast.BinOp) and isinstance(
            p.op, ast.Mod)), None)  # (also one side of an ``and``: ``use_accum and step % N``)
    if modulo is not None and loop is not None \
            and any(index.loop_of(a.node) is loop for a in adds):
        step = dotted_name(modulo.left) or "the step"
        return "`%s %% N` is true when %s is not a multiple of N: it applies on N - 1 " \
            "micro-batches of every N" % (step, step)
    flag = frozen(index, test)
    if flag:
        return "`%s` is Python state read in a traced step: the trace fixes the branch " \
            "once, so the apply runs on every call or never" % flag
    shadowed = _variables_index(index, test, adds)
    if shadowed:
        return "`%s %% N` reads `%s` as the loop over the gradients before it (line %d) " \
            "left it, the last variable's index, not a count of micro-batches" % (
                shadowed[0], shadowed[0], shadowed[1])
    epochs = _epoch_count_flush(test)
    if epochs:
        return "the flush `... == %s` compares the batch index with the number of epochs, " \
            "not of batches in one: the last partial cycle is applied at the wrong batch, " \
            "or never" % epochs
    for node in nodes_in(test):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 \
                and isinstance(node.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(node.comparators[0], ast.Call):
            left, indexed = node.left, ""
            while isinstance(left, ast.Subscript):
                left, indexed = left.value, "[...]"
            negated = isinstance(node.ops[0], ast.IsNot)
            return "`%s%s %s %s(...)` tests identity with an object made there: always %s" % (
                dotted_name(left) or "the sums", indexed, "is not" if negated else "is",
                dotted_name(node.comparators[0].func) or "a call", "true" if negated else "false")
    return None


def _variables_index(index, test, adds):
    """``(name, line)`` when the counter of the test's ``% N`` is bound only
    by a ``for`` loop that adds the gradients to the sums (``for i, g in
    enumerate(grads): buf[i] += g``), ended before the test: the episode's
    count it shadows is not what is read; else None."""
    for node in nodes_in(test):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) \
                and isinstance(node.left, ast.Name):
            bound = index.values_of(node.left.id, node)
            loops = [n for _, n in bound if isinstance(n, ast.For)]
            if bound and len(loops) == len(bound) and all(
                    test.lineno > last_line(loop) and any(
                        any(up is loop for up in index.ancestors(a.node)) for a in adds)
                    for loop in loops):
                return node.left.id, loops[0].lineno
    return None


def _epoch_count_flush(test):
    """``(i + 1) % N == 0 or (i + 1) == epochs``: the ``or`` side meant as
    the epoch's last batch compares with a count of epochs
    (``counts_epochs``); its name, else None."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or)):
        return None
    for side in test.values:
        if isinstance(side, ast.Compare) and len(side.ops) == 1 \
                and isinstance(side.ops[0], (ast.Eq, ast.GtE)):
            if counts_epochs(side.comparators[0]):
                return dotted_name(side.comparators[0])
    return None


def frozen(index, test):
    """The ``self.X`` of ``test``, read in a traced function, that is a
    Python bool (bound to ``True`` or ``False`` only, wherever the file
    binds an attribute ``X``) the function never sets ``True`` itself, or
    a Python count (bound to numbers only) the function advances itself
    (``self.step += 1``: it moves once, at tracing); or None."""
    function = index.function_of(test)
    if function is None or id(function) not in index.memo(
            ("traced",), lambda: traced_functions(index.nodes)):
        return None
    for node in nodes_in(test):
        name = dotted_name(node) if isinstance(node, ast.Attribute) else None
        if not name or not name.startswith("self.") or name.count(".") != 1:
            continue
        values = [n.value for n in index.nodes if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Attribute) and t.attr == node.attr for t in n.targets)]
        if values and all(literal(v) is True or literal(v) is False for v in values) and not any(
                isinstance(n, ast.Assign) and literal(n.value) is True and any(
                    dotted_name(t) == name for t in n.targets) for n in nodes_in(function)):
            return name
        if values and all(isinstance(literal(v), int) and not isinstance(literal(v), bool)
                          for v in values) and any(
                isinstance(n, ast.AugAssign) and dotted_name(n.target) == name
                for n in nodes_in(function)):
            return name
    return None


def always_true(index, test):
    """``sums[0] is not None`` (or ``sums is not None``) where ``sums``
    are accumulated, unconditionally, before ``test`` in its function:
    sums just added to are never None."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.IsNot) and literal(test.comparators[0]) is None):
        return False
    left = test.left
    while isinstance(left, ast.Subscript):
        left = left.value
    key, function = index.key(left), index.function_of(test)
    return key is not None and any(
        a.key == key and a.function is function and a.node.lineno < test.lineno
        and not any(isinstance(up, ast.If) for up in index.ancestors(a.node)
                    if index.function_of(up) is function) for a in index.accumulates)
