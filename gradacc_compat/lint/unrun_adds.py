"""``lint``'s GAC102 for a TF1 graph whose ops that add to the sums are
built and never run: ``self.accum_ops = [acc.assign_add(g) ...]`` with no
``sess.run`` of it, no group or control dependency that reads it, while a
session loop runs the apply op of those sums. Each run applies what was
never added (often a zero sum, or zero over a zero count), on every batch;
the big batch adds N micro-batches first.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.accumulates import label
from gradacc_compat.lint.ast_helpers import dotted_name
from gradacc_compat.lint.session_runs import runs_of

__all__ = ["never_run"]


def never_run(index, report):
    for apply in index.applies:
        adds = [a for a in index.accumulates if a.key in apply.keys]
        runs = [r for r in runs_of(index, apply.node) if index.loop_of(r) is not None] \
            if adds else []
        if runs and all(_unread(index, a) for a in adds):
            report(runs[0], "GAC102", label(adds[0]), ": the ops that add to them are built "
                   "and never run, so each run of the apply op applies sums no batch was "
                   "added to")


def _unread(index, add):
    """The op ``add`` builds is bound to a name (``self.accum_ops = [...]``)
    that nothing reads but its own ``.append``."""
    statement = index.statement_of(add.node)
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return False
    name = dotted_name(statement.targets[0])
    if not name or not isinstance(statement.value, (ast.List, ast.ListComp, ast.Call)):
        return False
    for node in index.nodes:
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
                getattr(node, "ctx", None), ast.Load) and dotted_name(node) == name:
            parent = index.parents.get(node)
            if not (isinstance(parent, ast.Attribute) and parent.attr == "append"):
                return False
    return True
