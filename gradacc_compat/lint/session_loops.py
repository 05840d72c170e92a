"""``lint``'s GAC110 in TF1 session loops: ``sess.run(accum_ops)`` on
every batch and ``sess.run(train_op)`` when ``step % N`` says so, in a loop
over one epoch whose counter starts again at 0 each epoch, with nothing
run after it: the last partial cycle of each epoch is zeroed by the next
one (or carried into it) instead of applied. And GAC109: ``for _ in
range(N - 1): sess.run(accum_ops)`` and then a run of an apply op that
adds nothing: the batch that run reads is not in the sums. And GAC107: a
run that fetches the accumulation op with an op that advances
``global_step``, every micro-step. And GAC102: a loop pass that runs the
adding op and then the apply op, neither under a test (ops another module
builds: ``sess.run(model.cum_grad_ops)``, ``sess.run(model.apply_grad_ops)``).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import (block_of, dotted_name, last_line, method, nodes_in,
                                             with_contexts)
from gradacc_compat.lint.counters import counts_across
from gradacc_compat.lint.exprs import increment, number
from gradacc_compat.lint.scopes import LOOPS
from gradacc_compat.lint.session_runs import UPDATES, fetched, is_session_run, runs_of

__all__ = ["applied_every_batch", "counted_with_adds", "partial_cycles", "short_cycles"]

_APPLY_WORDS = ("train", "apply", "update", "optim", "step")


def partial_cycles(index, report):
    for loop in (n for n in index.nodes if isinstance(n, LOOPS)):
        outer = index.loop_of(loop)
        # (or an epoch's method, called from elsewhere, that zeroes the sums first)
        outer = outer or _zeroes_first(index, index.function_of(loop), loop)
        if outer is None:
            continue
        runs = [n for n in nodes_in(loop) if is_session_run(n) and index.loop_of(n) is loop]
        accums = [r for r in runs if _adds(r)]
        applies = [r for r in runs if r not in accums and _applies(r) and _counted_test(index, r)]
        if not accums or not applies:
            continue
        counter = _counted_test(index, applies[0])
        restarts = _restarts(index, counter, loop, outer)
        if not restarts and not counts_across(index, counter, outer):
            continue
        end = last_line(loop)
        after = [n for n in nodes_in(outer) if is_session_run(n) and n.lineno > end
                 and _applies(n) and not _adds(n)]
        if not after:
            name = [w for w in fetched(accums[0]) if _adding(w)][0]
            at = outer if isinstance(outer, LOOPS) else loop  # (the epoch's loop)
            report(at, "GAC110", name, "zeroed or carried into the next epoch" if restarts
                   else "carried into the next epoch: `%s` counts on across epochs" % counter)


def _adds(run):
    return any(_adding(w) for w in fetched(run))


def _adding(word):
    return "accum" in word or "collect" in word or word.startswith("cum")


def applied_every_batch(index, report):
    """GAC102 at the apply op's run, for ops no apply of the file builds."""
    built = set(id(r) for a in index.applies for r in runs_of(index, a.node))
    for loop in (n for n in index.nodes if isinstance(n, LOOPS)):
        runs = [n for n in index.statements_of(loop) if is_session_run(n)
                and index.loop_of(n) is loop and not any(
                    isinstance(up, ast.If) for up in index.ancestors_to(n, loop))]
        adds = [r for r in runs if _adds(r) and not _applies(r)]
        applies = [r for r in runs if _applies(r) and not _adds(r) and id(r) not in built
                   and adds and r.lineno > adds[0].lineno]
        if applies:
            name = [w for w in fetched(adds[0]) if _adding(w)][0]
            report(applies[0], "GAC102", name, ": the loop runs the adding op and the apply "
                   "op on every pass")


def _zeroes_first(index, function, loop):
    """``function`` when it runs a zeroing op (``sess.run(zero_ops)``) in its
    own body before ``loop``: each call starts the sums anew."""
    if function is None or isinstance(function, ast.Lambda):
        return None
    return function if any(
        is_session_run(n) and n.lineno < loop.lineno and index.loop_of(n) is None
        and any("zero" in w for w in fetched(n)) for n in index.statements_of(function)) else None


def _applies(run):
    words = fetched(run)
    return any(w.startswith(a) or w.endswith(a) for w in words for a in _APPLY_WORDS) \
        and not any("zero" in w or "init" in w for w in words)


def _counted_test(index, run):
    """The counter of the ``counter % N`` (or ``(counter + 1) % N``) test
    the run sits under in its own function, or None."""
    for up in index.ancestors(run):
        if isinstance(up, ast.If):
            for node in nodes_in(up.test):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
                    left = node.left
                    if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add):
                        left = left.left
                    if isinstance(left, ast.Name):
                        return left.id
                if _full_count(node, up):
                    return node.left.id
        if isinstance(up, LOOPS):
            break
    return None


def _full_count(test, branch):
    """``count == N`` (or ``>=``) for an ``if`` whose body makes ``count``
    0 again: a cycle counted by hand."""
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) \
        and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.GtE)) \
        and any(isinstance(n, ast.Assign) and number(n.value) == 0
                and any(getattr(t, "id", None) == test.left.id for t in n.targets)
                for statement in branch.body for n in nodes_in(statement))


def _restarts(index, counter, loop, outer):
    """``counter = 0`` in the epoch loop before the inner loop, or the inner
    loop's own ``enumerate``: the count starts again each epoch."""
    if counter is None:
        return False
    if isinstance(loop, ast.For) and counter in set(
            n.id for n in nodes_in(loop.target) if isinstance(n, ast.Name)):
        return method(loop.iter) in ("enumerate", "range", "xrange")
    return any(isinstance(n, ast.Assign) and number(n.value) == 0 and n.lineno < loop.lineno
               and any(getattr(t, "id", None) == counter for t in n.targets)
               and index.loop_of(n) is outer for n in nodes_in(outer))


def short_cycles(index, report):
    for apply in index.applies:
        if not apply.keys & index.accumulators:
            continue
        if _after_adds(index, apply.node):
            _long_cycles(index, report, apply)
            continue
        for run in runs_of(index, apply.node):
            loop = _adding_loop_before(index, run)
            if loop is not None and _one_less(loop.iter):
                report(run, "GAC109", "the apply op runs after N - 1 runs of the accumulation "
                       "and adds nothing itself: the batch its run reads is not in the sums")


def _long_cycles(index, report, apply):
    """GAC109: the apply op adds its own batch first (built under the adds'
    control dependencies) and runs after a loop of runs that add, over
    anything but ``range(N - 1)``: a cycle holds one micro-batch more than
    the loop's (found by the op's name, ``graph["apply_op"]`` too)."""
    statement = index.statement_of(apply.node)
    name = dotted_name(statement.targets[0]) if isinstance(statement, ast.Assign) \
        and len(statement.targets) == 1 else None
    if not name:
        return
    word = name.split(".")[-1].lower()
    runs = runs_of(index, apply.node) or [r for r in index.calls if is_session_run(r)
                                          and word in fetched(r)]
    for run in runs:
        loop = _adding_loop_before(index, run)
        if loop is not None and not _one_less(loop.iter):
            report(apply.node, "GAC109", "the apply op adds its own batch (it waits on the "
                   "adds), and runs after a loop of runs of the accumulation: each cycle "
                   "holds one micro-batch more than the loop's")
            return  # (said at the op, where the dependency is built)


def _adding_loop_before(index, run):
    """The ``for`` loop just before the statement of ``run``, when every
    session run in it runs the accumulation (there is one) and ``run``
    itself does not; else None."""
    before = _previous(index, index.statement_of(run))
    inner = [r for r in nodes_in(before) if is_session_run(r)] \
        if isinstance(before, ast.For) else []
    return before if inner and all(_adds(r) for r in inner) and not _adds(run) else None


def _one_less(node):
    """``range(X - 1)``."""
    return method(node) == "range" and len(node.args) == 1 and isinstance(
        node.args[0], ast.BinOp) and isinstance(node.args[0].op, ast.Sub) \
        and number(node.args[0].right) == 1


def _previous(index, statement):
    """The statement before ``statement`` in its block, past those that
    run nothing (``feed_dict = {handle: train_handle}``)."""
    block = block_of(index.parents.get(statement), statement) or []
    i = next((i for i, s in enumerate(block) if s is statement), 0)
    while i and isinstance(block[i - 1], ast.Assign) and not any(
            is_session_run(n) for n in nodes_in(block[i - 1])):
        i -= 1
    return block[i - 1] if i else None


def _after_adds(index, node):
    """The op is built under ``tf.control_dependencies`` of the adds (or of
    any op named for accumulation): its run adds its batch first."""
    return any("accum" in (dotted_name(n) or "").lower() or any(
        a.node is n for a in index.accumulates)
        for up in index.ancestors(node) for c in with_contexts(up) for n in nodes_in(c))


def counted_with_adds(index, report):
    ops = {}  # the name an op that advances global_step is bound to -> the counter
    for node in index.assigns:
        counter = increment(node.value) if isinstance(node, ast.Assign) else None
        if counter and "global_step" in counter and len(node.targets) == 1:
            ops[dotted_name(node.targets[0])] = counter
    for run in (n for n in index.calls if is_session_run(n) and n.args):
        names = _fetched_names(index, run)
        words = [name.split(".")[-1].lower() for name in names]
        # (or an op of another file named so: ``model.increment_global_step``)
        counted = [ops[name] for name in names if name in ops] + [
            "global_step" for w in words if "global_step" in w and w.startswith("inc")]
        adds = any("accum" in w or index.accumulators and w.startswith("grad") for w in words)
        if counted and adds and not any(w.startswith(UPDATES) for w in words):
            report(run, "GAC107", counted[0], "the hand-rolled apply")


def _fetched_names(index, run):
    """The dotted names ``run`` fetches, and those a fetched local list is
    made of (``ops = [loss]; ops += [grad_op, step_op]``)."""
    names = set(dotted_name(n) for n in nodes_in(run.args[0])
                if isinstance(n, (ast.Name, ast.Attribute)) and dotted_name(n))
    scope = index.statements_of(index.function_of(run))
    for node in scope:
        if isinstance(node, (ast.Assign, ast.AugAssign)) and any(
                isinstance(t, ast.Name) and t.id in names
                for t in getattr(node, "targets", [getattr(node, "target", None)])):
            names |= set(dotted_name(n) for n in nodes_in(node.value)
                         if isinstance(n, (ast.Name, ast.Attribute)) and dotted_name(n))
    return names
