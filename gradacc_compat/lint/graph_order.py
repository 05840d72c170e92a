"""``lint``'s GAC109 for a TF1 graph whose cycle test reads its counter
with nothing ordering it after the counter's increment: ``inc =
tf.assign_add(count, 1)`` put before the accumulation ops by
``tf.control_dependencies([inc])``, and ``tf.cond(tf.equal(count % N, 0),
apply, accumulate)`` outside that block. A graph runs ops in the order of
their dependencies, not of the lines, so the test may read the count
before this step's add: 0 at the first micro-batch, an apply after one.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, method, names_in, with_contexts
from gradacc_compat.lint.exprs import any_increment, made_zero, modulo_tested

__all__ = ["unordered_tests"]


def unordered_tests(index, report):
    guarded = set(id(test) for a in index.applies if a.keys & index.accumulators
                  for kind, test in index.guards(a.node) if kind == "cond")
    for call in (c for c in index.calls if method(c) == "cond" and c.args):
        test = call.args[0]
        modulo = modulo_tested(test) if id(test) in guarded else None
        counter = dotted_name(modulo.left) if modulo is not None else None
        if not counter or not _made_zero(index, counter):
            continue
        increments = [name for name, value in _bound_ops(index)
                      if any_increment(value) == counter]
        blocks = [w for w in index.nodes if any(
            method(c) == "control_dependencies" and set(increments) & names_in(c)
            for c in with_contexts(w))]
        if blocks and not any(w in blocks for w in index.ancestors(call)):
            report(test, "GAC109", "the test reads `%s` with nothing ordering it after its "
                   "increment `%s`: at the first micro-batch it may read 0 and apply after "
                   "one micro-batch" % (counter, increments[0]))


def _made_zero(index, name):
    values = [n.value for n in index.assigns if isinstance(n, ast.Assign)
              and any(dotted_name(t) == name for t in n.targets)]
    return len(values) == 1 and (made_zero(values[0]) or any(
        k.arg == "initializer" and made_zero(k.value)
        for k in getattr(values[0], "keywords", [])))


def _bound_ops(index):
    return [(n.targets[0].id, n.value) for n in index.assigns if isinstance(n, ast.Assign)
            and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
            and isinstance(n.value, ast.Call)]
