"""``lint``'s GAC107 on the branch that skips the apply: a ``tf.cond``
that applies on one side and, on the other, advances the optimizer's
``iterations`` or the ``global_step`` (so that they count every
micro-step, as Horovod's gradient aggregation does), also through a second
``tf.cond`` on the same predicate whose applying side is a no-op.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast
import re

from gradacc_compat.lint.ast_helpers import FUNCTIONS, dotted_name, method, nodes_in
from gradacc_compat.lint.counters import graph_step
from gradacc_compat.lint.exprs import accumulation, increment, no_accumulation, number
from gradacc_compat.lint.scopes import RUNS

__all__ = ["branch_function", "cond_branches", "double_counted", "else_counts",
           "skipped_steps"]

_APPLIES = ("apply_gradients", "_apply_gradients", "minimize")
_OVERFLOW = frozenset(["inf", "nan", "nans", "finite", "isinf", "isnan", "isfinite",
                       "overflow"])


def skipped_steps(index, report):
    conds = [c for c in index.calls if method(c) == "cond" and cond_branches(c)[0] is not None]
    applying = {}  # the predicate's dump -> the position of the branch that applies
    for call in conds:
        sides = [position for position, branch in enumerate(cond_branches(call))
                 if branch is not None and _applies(index, branch)]
        if len(sides) == 1:  # (``tf.cond(n == 1, plain_step, accumulating_step)``: no skip)
            applying[ast.dump(_predicate(call))] = sides[0]
    for call in conds:
        predicate = _predicate(call)
        position = applying.get(ast.dump(predicate))
        if position is None or _overflow_test(index, predicate, call):
            continue  # (skipping the apply on an overflow is no micro-step)
        counted = set(dotted_name(n) for n in nodes_in(predicate))
        tested = set(dotted_name(n) for t in _with_bindings(index, predicate, call)
                     for n in nodes_in(t))
        skip = cond_branches(call)[1 - position]
        applied = _runs(index, cond_branches(call)[position])
        for node in _runs(index, skip):
            counter = increment(node) or _step_increment(index, node)
            if counter and counter in tested and not _advanced(applied, counter):
                report(node, "GAC109", "`%s` decides the cycle but advances only on the steps "
                       "that do not apply: once it reaches a multiple of N it stays there, "
                       "and every later step applies" % counter)
            elif counter and (counter not in counted or graph_step(index, counter, call)
                              and _advanced(applied, counter)):
                # (a ``global_step`` that also gates the cycle still counts
                # micro-steps when both branches advance it)
                report(node, "GAC107", counter,
                       "the `tf.cond` branch")


def _step_increment(index, node):
    """``step.assign(step + 1)`` (or ``assign_add(1)``) of a name bound to
    the graph's step under a name of its own (``batch_id =
    tf.train.create_global_step()``): that name, else None."""
    if not (isinstance(node, ast.Call) and method(node) in ("assign", "assign_add")
            and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and len(node.args) == 1):
        return None
    name, value = node.func.value.id, node.args[0]
    plus_one = number(value) == 1 if method(node) == "assign_add" else (
        isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)
        and dotted_name(value.left) == name and number(value.right) == 1)
    return name if plus_one and graph_step(index, name, node) else None


def _advanced(nodes, counter):
    """Among ``nodes``, an increment of ``counter`` or an apply handed the
    ``global_step`` (which advances it), or an apply of the optimizer whose
    ``iterations`` the counter is."""
    owner = counter[:-len(".iterations")] if counter.endswith(".iterations") else None
    return any(increment(n) == counter or isinstance(n, ast.Call) and method(n) in _APPLIES and (
        any(k.arg == "global_step" for k in n.keywords) or len(_positional(n)) > 1
        or owner is not None and isinstance(n.func, ast.Attribute)
        and dotted_name(n.func.value) == owner) for n in nodes)


def _positional(call):
    """The arguments of ``call`` given one by one (not a ``*args``)."""
    return [a for a in call.args if type(a).__name__ != "Starred"]


def double_counted(index, report):
    """GAC109: an optimizer subclass whose cycle test reads its own
    ``self.iterations``, advanced by hand every micro-step and again by the
    parent's ``apply_gradients`` in the branch that applies: the steps that
    apply count twice, so the cycles after the first are N - 1 long."""
    for call in index.calls:
        branches = cond_branches(call) if method(call) == "cond" else (None, None)
        if branches[0] is None:
            continue
        predicate = _predicate(call)
        tests = [predicate] + [value for n in nodes_in(predicate) if isinstance(n, ast.Name)
                               for value, _ in index.values_of(n.id, call)]
        if "self.iterations" not in set(dotted_name(n) for t in tests for n in nodes_in(t)):
            continue
        parent = any(isinstance(n, ast.Call) and method(n) == "apply_gradients"
                     and isinstance(n.func, ast.Attribute) and method(n.func.value) == "super"
                     for b in branches for n in _runs(index, b))
        function = index.function_of(call)
        by_hand = any(increment(n) == "self.iterations" for n in index.statements_of(function))
        if parent and by_hand:
            report(call, "GAC109", "`self.iterations` decides the cycle and advances twice "
                   "on the steps that apply (by hand, and in the parent's apply_gradients): "
                   "the cycles after the first are N - 1")


def _overflow_test(index, predicate, call):
    """The test skips the update when the gradients overflow (``tf.is_inf``,
    ``has_nans``; mixed precision), read through the names it is made of."""
    words = set(w for t in _with_bindings(index, predicate, call) for n in nodes_in(t)
                for w in re.split(r"[._]", (dotted_name(n) or "").lower()))
    return bool(words & _OVERFLOW)


def _with_bindings(index, predicate, call):
    """The predicate and what the names in it are bound to (one hop)."""
    return [predicate] + [value for n in nodes_in(predicate) if isinstance(n, ast.Name)
                          for value, _ in index.values_of(n.id, call)]


def _predicate(call):
    for kw in call.keywords:
        if kw.arg == "pred":
            return kw.value
    return call.args[0] if call.args else call


def cond_branches(call):
    """The ``(true_fn, false_fn)`` of a ``tf.cond``, (None, None) when absent."""
    found = list(call.args[1:3])
    found += [None] * (2 - len(found))
    for kw in call.keywords:
        if kw.arg in ("true_fn", "false_fn"):
            found[kw.arg == "false_fn"] = kw.value
    return tuple(found) if all(b is not None for b in found) else (None, None)


def branch_function(index, branch, at):
    """The def or lambda a ``tf.cond`` branch names: a lambda itself; for a
    name, the last def of it before ``at`` in the scope that binds it; else
    the one def of the file with that name (``self.apply_sums``); or None."""
    if isinstance(branch, ast.Lambda):
        return branch
    if isinstance(branch, ast.Name):
        defs = [f for f in index.statements_of(index.binder(branch.id, at))
                if isinstance(f, ast.FunctionDef) and f.name == branch.id
                and f.lineno < at.lineno]
        if defs:
            return max(defs, key=lambda f: f.lineno)
    name = (dotted_name(branch) or "").split(".")[-1]
    named = [f for f in index.functions if getattr(f, "name", None) == name]
    return named[0] if len(named) == 1 else None


def _runs(index, branch, hops=2):
    """The nodes a branch runs: its function's, and those of the file's
    functions it calls (``hops`` deep)."""
    function = branch_function(index, branch, branch)
    if function is None:
        return []
    found = list(index.statements_of(function)) if not isinstance(function, ast.Lambda) \
        else list(nodes_in(function.body))
    for node in list(found):
        if not (hops and isinstance(node, ast.Call)):
            continue
        # (the functions it calls, those it hands to a ``tf.cond`` of its own,
        # and one it runs per replica: ``call_for_each_replica(fn)``)
        handed = cond_branches(node) if method(node) == "cond" else \
            node.args[:1] if method(node) in RUNS else ()
        for ref in [node.func] + [b for b in handed if b is not None]:
            callee = branch_function(index, ref, node) if isinstance(ref, ast.Name) else None
            if callee is not None and not isinstance(callee, ast.Lambda):
                found += _runs(index, ref, hops - 1)
            elif isinstance(ref, ast.Lambda):
                found += list(nodes_in(ref.body))
    return found


def _applies(index, branch):
    name = (dotted_name(branch) or "").split(".")[-1].lower()
    if "apply" in name:
        return True
    return any(isinstance(n, ast.Call) and method(n) in _APPLIES for n in _runs(index, branch)
               if not isinstance(n, FUNCTIONS))


def else_counts(index, report):
    """GAC107 for ``if <cycle ends>: <apply> else: opt.iterations.assign_add(1)``:
    the apply advances the count on its steps and the ``else`` on the
    others, so it counts every micro-step."""
    for node in (n for n in index.nodes if isinstance(n, ast.If) and n.orelse
                 and not (accumulation(n.test) or no_accumulation(n.test))):
        body = [n for s in node.body for n in nodes_in(s)]  # (a cycle's test, not a path's)
        calls = [n for n in body if isinstance(n, ast.Call)]
        if not any(method(c) in _APPLIES for c in calls) and not any(
                _applies(index, c.func) for c in calls if isinstance(c.func, ast.Attribute)
                and dotted_name(c.func.value) == "self"):
            continue
        for other in (n for s in node.orelse for n in nodes_in(s)):
            counter = increment(other)
            if counter and not any(increment(n) == counter for n in body):
                report(other, "GAC107", counter,
                       "this `else`'s `if`, whose apply advances it too and")
