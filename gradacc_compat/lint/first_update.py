"""``lint``'s GAC109 for a TF1 optimizer subclass that counts its cycle in a
variable of its own (``self._iter``, or the non-slot variable ``"iter"``):
made 0, tested ``tf.equal(iter, 0)`` to decide the update, and advanced
``iter <- (iter + 1) mod N`` only in ``_finish``, after the update. The very
first micro-batch is then applied alone (its gradient divided by N) before
the regular cycles of N begin; starting the counter at 1 avoids it. Reported
at the test; the message names the line that makes the counter 0. And a
``_finish`` that advances the counter by 1 without the mod N: once past 0,
the test never holds again and the sums are never applied.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import FUNCTIONS, dotted_name, method, nodes_in, string_of
from gradacc_compat.lint.exprs import compared_to_zero, number

__all__ = ["applied_alone"]


def applied_alone(index, report):
    for cls in (c for c in index.nodes if isinstance(c, ast.ClassDef)):
        methods = dict((f.name, f) for f in cls.body if isinstance(f, FUNCTIONS[:-1]))
        finish = methods.get("_finish")
        if finish is None:
            continue
        assigned = [(_counter(index, methods, n.func.value), n.args[0]) for n in nodes_in(finish)
                    if method(n) == "assign" and isinstance(n.func, ast.Attribute) and n.args]
        advanced = set(c for c, value in assigned if _plus_one_mod(value))
        counted_up = set(c for c, value in assigned if _plus_one(value)) - advanced
        for counter, made, start in _made(cls):
            tests = [c for c in nodes_in(cls) if method(c) == "cond" and c.args
                     and index.function_of(c) is not finish
                     and _tests_zero(index, methods, c.args[0], counter)]
            if not tests:
                continue
            if counter in advanced and start == 0:
                report(tests[0].args[0], "GAC109", "`tf.equal(%s, 0)` with `%s` made 0 (line "
                       "%d) and advanced in _finish, after the update: the first update takes "
                       "one micro-batch" % (counter[1], counter[1], made.lineno))
            elif counter in counted_up:
                report(tests[0].args[0], "GAC109", "`tf.equal(%s, 0)` gates the update, but "
                       "_finish only adds 1 to `%s`, never wrapping it mod N: once past 0 it "
                       "never is 0 again, and the sums are never applied" % (counter[1],
                                                                           counter[1]))


def _made(cls):
    """``(counter, node, start)`` for each counter the class makes:
    ``self._iter = tf.Variable(0)`` or
    ``self._create_non_slot_variable(initial_value=0, name="iter")``
    (``start`` None when not a number)."""
    for node in nodes_in(cls):
        if isinstance(node, ast.Assign) and method(node.value) in ("Variable", "variable") \
                and node.value.args:
            for target in node.targets:
                if (dotted_name(target) or "").startswith("self."):
                    yield ("attr", dotted_name(target)), node.value, number(node.value.args[0])
        if method(node) == "_create_non_slot_variable":
            given = dict((k.arg, k.value) for k in node.keywords)
            value = given.get("initial_value", node.args[0] if node.args else None)
            name = string_of(given.get("name", node.args[1] if len(node.args) > 1 else None))
            if name and value is not None:
                yield ("slot", name), node, number(value)


def _counter(index, methods, node, depth=2):
    """Which counter ``node`` reads: ``("attr", "self._iter")``,
    ``("slot", "iter")`` (through a getter method, or a local name bound
    to one), else None."""
    name = dotted_name(node)
    if name and name.startswith("self."):
        return ("attr", name)
    if method(node) == "_get_non_slot_variable" and node.args:
        return ("slot", string_of(node.args[0]))
    if isinstance(node, ast.Call) and name is None and depth and (
            dotted_name(node.func) or "").startswith("self."):
        getter = methods.get(dotted_name(node.func)[5:])
        returns = [r.value for r in nodes_in(getter) if isinstance(r, ast.Return)
                   and r.value is not None] if getter is not None else []
        found = [_counter(index, methods, r, depth - 1) for r in returns]
        return next((f for f in found if f), None)
    if isinstance(node, ast.Name) and depth:
        # (values_of also sees through a getter: its call and what it returns)
        found = set(_counter(index, methods, value, depth - 1)
                    for value, _ in index.values_of(node.id, node)) - set([None])
        return found.pop() if len(found) == 1 else None
    return None


def _tests_zero(index, methods, test, counter):
    """``tf.equal(<counter>, 0)`` or ``<counter> == 0``."""
    left = compared_to_zero(test)
    return left is not None and _counter(index, methods, left) == counter


def _plus_one_mod(value):
    """``tf.mod(x + 1, n)`` / ``(x + 1) % n``."""
    if method(value) in ("mod", "floormod") and len(value.args) == 2:
        left = value.args[0]
    elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mod):
        left = value.left
    else:
        return False
    return _plus_one(left)


def _plus_one(value):
    """``x + 1``."""
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) \
        and number(value.right) == 1
