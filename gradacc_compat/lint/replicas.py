"""Whether a model class runs in replica context: it is built under a
``tf.distribute`` strategy's ``scope()``. A file that names a strategy may
still build the class that accumulates outside it (a script that compares a
distributed run with an accumulating one), and that class's ``tf.cond``
around ``apply_gradients`` then never meets a replica.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, method, with_contexts

__all__ = ["built_outside_strategy", "in_cross_replica"]


def built_outside_strategy(index, node):
    """The class around ``node`` is built in this file, and never under
    ``with <strategy>.scope():`` nor in a function called there (two
    calls deep): its ``train_step`` runs without replicas."""
    cls = index.class_of(node)
    if cls is None:
        return False
    builds = [c for c in index.calls if (dotted_name(c.func) or "").rsplit(".", 1)[-1] == cls.name]
    return bool(builds) and not any(_under_scope(index, c, 2) for c in builds)


def _under_scope(index, node, hops):
    for up in index.ancestors(node):
        if any(method(context) == "scope" for context in with_contexts(up)):
            return True
    function = index.function_of(node)
    return hops > 0 and function is not None and any(
        _under_scope(index, call, hops - 1) for call in index.callers(function))


def in_cross_replica(index, node):
    """``node`` is in a function handed to ``merge_call`` (or in one
    nested there): it runs in cross-replica context, where a ``tf.cond``
    around ``call_for_each_replica(apply)`` is how the apply is gated."""
    for up in index.ancestors(node):
        name = getattr(up, "name", None)
        if name and isinstance(up, ast.FunctionDef) and any(
                method(c) == "merge_call" and c.args and dotted_name(c.args[0]) == name
                for c in index.calls):
            return True
    return False
