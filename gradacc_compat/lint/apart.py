"""``lint``'s GAC109 for an apply in the branch of an ``if`` that does not
accumulate (``if counter < N: sums += g / else: apply(sums)``, either way
round): the micro-batch of each step that applies is never added, or it
only starts the next cycle; and ``if step == 0: build(...) elif (step + 1)
% N == 0: apply`` whose first step adds nothing (the first cycle is N - 1);
and sums made anew from the micro-batch, just before the apply, under the
same test (each apply holds one micro-batch).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint import parameters
from gradacc_compat.lint.ast_helpers import block_of, dotted_name, method, nodes_in
from gradacc_compat.lint.exprs import (GRADIENT_CALLS, accumulation, compared_to_zero,
                                       modulo_tested, no_accumulation, reads_modulo)

__all__ = ["branch_without_add", "first_step_elsewhere", "reset_before"]


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
    return any(item.node is n or any(item.node is m for m in nodes_in(n))
               for n in statements for item in items)


def _apart(index, adding, applying, apply):
    """The micro-batch of a step that applies is never added (its gradient
    is lost, cycles of N - 1 micro-batches), unless the apply's branch adds
    it too; that branch may instead make the sums anew from it after the
    apply (the first cycle alone is N - 1)."""
    adds = [a for a in index.accumulates if a.key in apply.keys]
    if not (adds and _holds(adds, adding) and not _holds(adds, applying)):
        return None
    added = set(n.id for a in adds for n in nodes_in(a.value) if isinstance(n, ast.Name))
    walked = [index.loop_item(n) for a in adds for n in nodes_in(a.value)
              if isinstance(n, ast.Name)]  # (``grads`` of ``for i, g in enumerate(grads)``)
    added |= set(n.id for item in walked if item is not None for n in nodes_in(item)
                 if isinstance(n, ast.Name))
    if any(isinstance(n, ast.Assign) and n.lineno > apply.node.lineno
           and any(index.key(t) == a.key for t in n.targets for a in adds)
           and any(isinstance(v, ast.Name) and v.id in added for v in nodes_in(n.value))
           for statement in applying for n in nodes_in(statement)):
        if _first_skipped(index, apply, adds):
            return None  # (the first pass takes this branch and only starts the sums)
        return ("the branch that applies does not add its micro-batch but starts the "
                "next cycle with it: the first cycle holds N - 1 micro-batches")
    return ("it applies in the branch that does not accumulate: the micro-batch of "
            "each step that applies is never added (cycles of N - 1)")


def _first_skipped(index, apply, adds):
    """The apply sits under ``if sums is not None:`` (the sums of ``adds``):
    the first pass comes to it with nothing summed, applies nothing and
    starts the sums, so the first cycle is N, as every other."""
    keys = set(a.key for a in adds)
    return any(isinstance(up, ast.If) and isinstance(up.test, ast.Compare)
               and len(up.test.ops) == 1 and isinstance(up.test.ops[0], ast.IsNot)
               and index.key(up.test.left) in keys for up in index.ancestors(apply.node))


def first_step_elsewhere(index, test, apply):
    """``test`` is the ``(step + 1) % N == 0`` of an ``elif`` after ``if
    step == 0:``, a branch that adds nothing (it builds the model, say):
    the first cycle holds N - 1 micro-batches."""
    branch = index.parents.get(test)
    outer = index.parents.get(branch)
    if not (isinstance(branch, ast.If) and isinstance(outer, ast.If)
            and len(outer.orelse) == 1 and outer.orelse[0] is branch):
        return None
    zero, modulo = compared_to_zero(outer.test), modulo_tested(test)
    name = dotted_name(zero) if zero is not None else None
    left = getattr(modulo, "left", None)
    if not name or not (isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add)
                        and dotted_name(left.left) == name) or _adds_in(index, outer.body):
        return None
    return ("step 0 takes the branch `%s == 0`, which adds nothing: the first cycle "
            "holds N - 1 micro-batches" % name)


def _adds_in(index, statements):
    """An accumulation in ``statements``, or in a function they call (or a
    gradient taken there: what it is for, lint may not see)."""
    nodes = [n for s in statements for n in nodes_in(s)]
    ids = set(id(n) for n in nodes)
    callees = [index.callee(n) for n in nodes if isinstance(n, ast.Call)]
    called = set(id(f) for f in callees if f is not None)
    return any(id(a.node) in ids or id(a.function) in called for a in index.accumulates) or any(
        method(n) in GRADIENT_CALLS for f in callees if f is not None for n in nodes_in(f))


def reset_before(index, test, apply):
    """``if c % N == 0: sums = grads / else: sums += grads``, then ``if c %
    N == 0 [and c != 0]: apply(sums)``: in the pass that applies, the sums
    were just made anew from that micro-batch alone."""
    branch = index.parents.get(test)
    block = block_of(index.parents.get(branch), branch) if isinstance(branch, ast.If) else None
    if block is None or not reads_modulo(test):
        return None
    parts = set(ast.dump(p) for p in [test] + list(getattr(test, "values", [])))
    keys = apply.keys & index.accumulators
    for earlier in block:
        if earlier is branch:
            break
        if isinstance(earlier, ast.If) and ast.dump(earlier.test) in parts and any(
                isinstance(n, ast.Assign) and any(index.key(t) in keys for t in n.targets)
                and parameters.differentiated(index, n.value)
                for s in earlier.body for n in nodes_in(s)):
            return ("the sums are made anew under the same test just before, in the "
                    "same step: each apply holds that one micro-batch")
    return None

