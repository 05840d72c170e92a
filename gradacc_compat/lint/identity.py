"""``lint``'s GAC109 for a gate that tests identity with an object made on
the spot: ``if sums[0] is not tf.zeros_like(v):`` before the flush after
an epoch is always true, so the apply runs whether or not anything is left
to apply (with ``is``, never). A tensor compares by value, not by ``is``.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name

__all__ = ["with_new_object"]


def with_new_object(test):
    """Why ``test`` always says the same, or None."""
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
