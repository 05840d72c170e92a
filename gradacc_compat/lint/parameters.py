"""Where ``lint``'s dataflow crosses a call: a helper that takes the
gradients first (``use_accumulation(grads, tvars, opt)``), and the sums a
function writes through its parameter, which are its callers' sums.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, method, nodes_in
from gradacc_compat.lint.exprs import GRADIENT_CALLS
from gradacc_compat.lint.scopes import RUNS

__all__ = ["differentiated", "callers_keys", "run_by"]


def differentiated(index, expr, hops=1):
    """``expr`` is what a gradient call returns: directly, or through what
    a function of the file returns, called or run by ``strategy.run(fn)``
    (``losses, grads = strategy.run(train_step, args=(batch,))``)."""
    chain = index.sources(expr, expr, depth=8)[1]
    if any(isinstance(n, ast.Call) and method(n) in GRADIENT_CALLS
           for e in chain for n in nodes_in(e)):
        return True
    called = [f for e in chain for c in nodes_in(e) if isinstance(c, ast.Call)
              for f in [index.callee(c)] + run_by(index, c) if f is not None]
    return hops > 0 and any(differentiated(index, r.value, hops - 1) for f in called
                            for r in index.statements_of(f)
                            if isinstance(r, ast.Return) and r.value is not None)


def run_by(index, call):
    """The functions of the file ``strategy.run(fn, ...)`` may run (those
    named ``fn``)."""
    return [f for f in index.functions if call in index.handed_to(f)] \
        if method(call) in RUNS else []


def callers_keys(index, add):
    """The keys of what the callers pass for the parameter ``add`` writes
    (``accumulate(sums, x)``, ``strategy.run(accumulate, kwargs={"sums":
    sums})``): the caller's sums."""
    function = add.function
    if add.key[0] != "name" or function is None or id(function) != add.key[1] \
            or isinstance(function, ast.Lambda):
        return []
    found = []
    for value, _ in index.values_of(add.key[2], function.body[0]):
        if isinstance(value, ast.Call) or (dotted_name(value) or "").startswith("tf."):
            continue
        key = index.key(value)
        if key is not None and key != add.key:
            found.append(key)
    return found
