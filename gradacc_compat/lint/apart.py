"""``lint``'s GAC109 for an apply in the branch of an ``if`` that does not
accumulate (``if counter < N: sums += g / else: apply(sums)``, either way
round): the micro-batch of each step that applies is never added, or it
only starts the next cycle.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.exprs import accumulation, no_accumulation

__all__ = ["branch_without_add"]


def branch_without_add(index, test, apply):
    """``(decided, why)`` for the ``if`` whose test is ``test``: an apply in
    its ``else`` is decided here (``why`` None when that branch adds too);
    one in its body only when the ``else`` alone adds. A switch between a
    path that accumulates and one that does not (``if accum_steps <= 1``)
    is no cycle."""
    branch = index.parents.get(test)
    if not isinstance(branch, ast.If) or no_accumulation(test) or accumulation(test):
        return False, None
    if _holds([apply], branch.orelse):
        return True, _apart(index, branch.body, branch.orelse, apply)
    why = _apart(index, branch.orelse, branch.body, apply) if _holds([apply], branch.body) \
        else None
    return why is not None, why


def _holds(items, statements):
    return any(item.node is n or any(item.node is m for m in ast.walk(n))
               for n in statements for item in items)


def _apart(index, adding, applying, apply):
    """The micro-batch of a step that applies is never added (its gradient
    is lost, cycles of N - 1 micro-batches), unless the apply's branch adds
    it too; that branch may instead make the sums anew from it after the
    apply (the first cycle alone is N - 1)."""
    adds = [a for a in index.accumulates if a.key in apply.keys]
    if not (adds and _holds(adds, adding) and not _holds(adds, applying)):
        return None
    added = set(n.id for a in adds for n in ast.walk(a.value) if isinstance(n, ast.Name))
    walked = [index.loop_item(n) for a in adds for n in ast.walk(a.value)
              if isinstance(n, ast.Name)]  # (``grads`` of ``for i, g in enumerate(grads)``)
    added |= set(n.id for item in walked if item is not None for n in ast.walk(item)
                 if isinstance(n, ast.Name))
    if any(isinstance(n, ast.Assign) and n.lineno > apply.node.lineno
           and any(index.key(t) == a.key for t in n.targets for a in adds)
           and any(isinstance(v, ast.Name) and v.id in added for v in ast.walk(n.value))
           for statement in applying for n in ast.walk(statement)):
        return ("the branch that applies does not add its micro-batch but starts the "
                "next cycle with it: the first cycle holds N - 1 micro-batches")
    return ("it applies in the branch that does not accumulate: the micro-batch of "
            "each step that applies is never added (cycles of N - 1)")
