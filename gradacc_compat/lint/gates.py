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

from gradacc_compat.lint.ast_helpers import dotted_name

__all__ = ["misread"]


def misread(index, test, adds):
    """Why ``test`` does not gate one apply per N micro-batches, or None.
    (A bare modulo only as the gate of the loop that adds ``adds``: after
    it, ``if (step + 1) % N:`` asks whether a partial cycle is left.)"""
    loop = index.loop_of(test)
    if isinstance(test, ast.BinOp) and isinstance(test.op, ast.Mod) and loop is not None \
            and any(index.loop_of(a.node) is loop for a in adds):
        step = dotted_name(test.left) or "the step"
        return "`%s %% N` is true when %s is not a multiple of N: it applies on N - 1 " \
            "micro-batches of every N" % (step, step)
    for node in ast.walk(test):
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
