"""Applies of "sums" that accumulate nothing across micro-batches, which
``hand_rolled`` leaves alone:

* the cycle test is ``x % N == 0`` with N bound once, to 1
  (``update_every = 1``): every micro-batch is a whole cycle (unless the
  test also skips ``x == 0``);
* the sums are bound anew, unconditionally, to the step's own gradients in
  the function that applies them, and what is added to them there is no
  micro-batch's gradient but other terms of the same step
  (``grads = opt.compute_gradients(loss)``, then ``grads[i] += lam * g``
  for each replayed model, then the apply): one step's gradient.

And the arms of an ``if`` that run without accumulation (``if accum_steps
== 1:``), where ``divisions`` asks for no division.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, method, nodes_in
from gradacc_compat.lint.exprs import (GRADIENT_CALLS, accumulation, mod_parts, no_accumulation,
                                       number)

__all__ = ["cycle_of_one", "one_step_arm", "plain_step", "skips_zero"]

#: Calls that make sums to fill, not a step's gradients.
_MADE = ("Variable", "get_variable", "zeros", "zeros_like", "add_weight", "add_slot",
         "local_variable")


def plain_step(index, apply, adds):
    return _every_one(index, apply) or bool(adds) and all(
        _terms_of_one_step(index, apply, a) for a in adds)


def _every_one(index, apply):
    counter = cycle_of_one(index, apply)
    return counter is not None and not skips_zero(
        [test for _, test in index.guards(apply.node)], counter)


def cycle_of_one(index, apply):
    """The counter of the apply's ``x % N == 0`` test with N bound once, to
    1 (nothing to divide: a cycle holds one micro-batch), else None."""
    for _, test in index.guards(apply.node):
        for part in (mod_parts(n) for n in nodes_in(test)):
            values = index.values_of(part[1].id, test) if part and isinstance(
                part[1], ast.Name) else []
            if len(values) == 1 and number(values[0][0]) == 1:
                return part[0]
    return None


def skips_zero(tests, counter):
    """A test of ``tests`` that skips count 0 (``and count != 0``, ``> 0``)
    beside ``count % N == 0``: the first cycle holds one micro-batch more
    (with N of 1, two; GAC109 decides)."""
    return any(isinstance(n, ast.Compare) and dotted_name(n.left) == dotted_name(counter)
               and len(n.ops) == 1 and isinstance(n.ops[0], (ast.Gt, ast.NotEq))
               and number(n.comparators[0]) == 0 for t in tests for n in nodes_in(t))


def _terms_of_one_step(index, apply, add):
    function = apply.function
    if function is None or add.function is not function or index.locally_guarded(add.node):
        return False
    loop = index.loop_of(add.node)
    if loop is not None and any(method(n) in GRADIENT_CALLS for n in nodes_in(loop)):
        return False  # (a loop that differentiates walks micro-batches)
    taken = [n.lineno for n in index.statements_of(function) if isinstance(n, ast.Call)
             and method(n) in GRADIENT_CALLS and index.loop_of(n) is None]
    return any(not any(isinstance(up, ast.If) for up in index.ancestors_to(node, function))
               and not _makes_sums(index, node.value)
               and any(line <= node.lineno for line in taken)
               for node in index.bound_in_pass(None, add.key, add.node, function))


def _makes_sums(index, value):
    """``value`` makes variables or zeros to fill, itself or through a
    function of the file it calls (``sums = _sums(variables)``)."""
    calls = [c for c in nodes_in(value) if isinstance(c, ast.Call)]
    bodies = calls + [index.callee(c) for c in calls if index.callee(c) is not None]
    return any(method(c) in _MADE for b in bodies for c in nodes_in(b) if isinstance(c, ast.Call))


def one_step_arm(index, node):
    """``node`` is in the arm of an ``if`` that runs without accumulation
    (``if accum_steps == 1:``, or the ``else`` of ``if accum_steps > 1:``)."""
    child = node
    for up in index.ancestors(node):
        if isinstance(up, ast.If) and (
                no_accumulation(up.test) and any(child is s for s in up.body)
                or accumulation(up.test) and any(child is s for s in up.orelse)):
            return True
        child = up
    return False
