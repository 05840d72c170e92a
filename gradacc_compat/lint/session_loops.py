"""``lint``'s GAC110 in TF1 session loops: ``sess.run(accum_ops)`` on
every batch and ``sess.run(train_op)`` when ``step % N`` says so, in a loop
over one epoch whose counter starts again at 0 each epoch, with nothing
run after it: the last partial cycle of each epoch is zeroed by the next
one (or carried into it) instead of applied.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import method
from gradacc_compat.lint.exprs import number
from gradacc_compat.lint.scopes import LOOPS
from gradacc_compat.lint.session_runs import fetched, is_session_run

__all__ = ["partial_cycles"]

_APPLY_WORDS = ("train", "apply", "update", "optim", "step")


def partial_cycles(index, report):
    for loop in (n for n in index.nodes if isinstance(n, LOOPS)):
        outer = index.loop_of(loop)
        if outer is None:
            continue
        runs = [n for n in ast.walk(loop) if is_session_run(n) and index.loop_of(n) is loop]
        accums = [r for r in runs if any("accum" in w for w in fetched(r))]
        applies = [r for r in runs if r not in accums and _applies(r) and _counted_test(index, r)]
        if not accums or not applies:
            continue
        counter = _counted_test(index, applies[0])
        if not _restarts(index, counter, loop, outer):
            continue
        end = max(getattr(n, "lineno", 0) for n in ast.walk(loop))
        after = [n for n in ast.walk(outer) if is_session_run(n) and n.lineno > end
                 and _applies(n) and not any("accum" in w for w in fetched(n))]
        if not after:
            name = [w for w in fetched(accums[0]) if "accum" in w][0]
            report(loop, "GAC110", name, "zeroed or carried into the next epoch")


def _applies(run):
    words = fetched(run)
    return any(w.startswith(a) or w.endswith(a) for w in words for a in _APPLY_WORDS) \
        and not any("zero" in w or "init" in w for w in words)


def _counted_test(index, run):
    """The counter of the ``counter % N`` (or ``(counter + 1) % N``) test
    the run sits under in its own function, or None."""
    for up in index.ancestors(run):
        if isinstance(up, ast.If):
            for node in ast.walk(up.test):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
                    left = node.left
                    if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add):
                        left = left.left
                    if isinstance(left, ast.Name):
                        return left.id
        if isinstance(up, LOOPS):
            break
    return None


def _restarts(index, counter, loop, outer):
    """``counter = 0`` in the epoch loop before the inner loop, or the inner
    loop's own ``enumerate``: the count starts again each epoch."""
    if counter is None:
        return False
    if isinstance(loop, ast.For) and counter in set(
            n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)):
        return method(loop.iter) == "enumerate"
    return any(isinstance(n, ast.Assign) and number(n.value) == 0 and n.lineno < loop.lineno
               and any(getattr(t, "id", None) == counter for t in n.targets)
               and index.loop_of(n) is outer for n in ast.walk(outer))
