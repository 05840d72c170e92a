"""``lint``'s checks of Keras 2 optimizers that accumulate inside
``get_updates`` (the widely copied "AdamAccumulate"): every update of the
list runs on every micro-batch and reads the counter before this call's
``(self.iterations, self.iterations + 1)``. So ``self.iterations % N == 0``
is true at the first micro-batch (GAC109), and a bias correction on
``t = self.iterations + 1`` counts micro-batches (GAC107). The same gate
on ``global_step`` in a TF1 optimizer's ``apply_gradients`` (GAC109).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import (dotted_name, method, nodes_in, parameter_names,
                                             with_contexts)
from gradacc_compat.lint.exprs import modulo_tested, number

__all__ = ["get_updates"]

_COUNTER = "self.iterations"


def get_updates(index, report):
    for cls in (n for n in index.nodes if isinstance(n, ast.ClassDef)):
        methods = dict((f.name, f) for f in cls.body if isinstance(f, ast.FunctionDef))
        if "apply_gradients" in methods:
            _global_step_gate(index, methods["apply_gradients"], report)
        else:
            _slot_bias_correction(index, methods, report)
        if "get_updates" not in methods:
            continue
        tests = [n for n in nodes_in(cls) if _modulo_test(n, (_COUNTER,))]
        if tests and _never_advanced(index, cls, tests, methods["get_updates"], report):
            continue
        advanced = _advanced_first(index, cls)
        for test in tests:
            if not any(up in advanced for up in index.ancestors(test)):
                report(test, "GAC109", "`%s %% N == 0` reads the count before this call's "
                       "update: true at the first micro-batch" % _COUNTER)
        updates = methods["get_updates"]
        _restarted_without_batch(updates, report)
        counts = set([_COUNTER]) | set(t.id for n in nodes_in(updates) if isinstance(n, ast.Assign)
                                       and _counts_from_iterations(n.value)
                                       for t in n.targets if isinstance(t, ast.Name))
        if not any(_modulo_test(n, counts) for n in nodes_in(updates)):
            continue  # (not gated: a plain optimizer)
        _unmasked_updates(updates, counts, report)
        for node in nodes_in(updates):
            if isinstance(node, ast.Assign) and _counts_from_iterations(node.value) \
                    and _bias_corrects(methods["get_updates"], node.targets):
                report(node, "GAC107", _COUNTER, "the gated update of get_updates (its bias "
                       "correction reads it)")


def _slot_bias_correction(index, methods, report):
    """GAC107 for a Keras ``OptimizerV2`` that accumulates in a slot inside
    ``_resource_apply_dense`` and decides there whether to update: the
    inherited ``apply_gradients`` advances ``self.iterations`` on every
    call, so ``tf.pow(beta_1, self.iterations + 1)`` (in
    ``_prepare_local``) counts micro-steps."""
    dense = methods.get("_resource_apply_dense")
    if dense is None or not any(any(up is dense for up in index.ancestors(a.node))
                                for a in index.accumulates):
        return
    for function in methods.values():
        for node in nodes_in(function):
            if isinstance(node, ast.Assign) and _counts_from_iterations(_unwrapped(node.value)) \
                    and _bias_corrects(function, node.targets):
                report(node, "GAC107", _COUNTER, "the update `_resource_apply_dense` gates "
                       "(the bias correction reads it)")


def _unwrapped(value):
    """``tf.cast(x, dtype)`` is ``x``."""
    return value.args[0] if method(value) == "cast" and value.args else value


def _restarted_without_batch(updates, report):
    """``K.update(ag, K.switch(cond, ag * 0, ag + g))``: on the micro-batch
    the cycle applies, the sums start again from zero without its ``g``."""
    for node in nodes_in(updates):
        if method(node) != "update" or len(node.args) != 2 or method(node.args[1]) != "switch" \
                or len(node.args[1].args) != 3:
            continue
        target = dotted_name(node.args[0])
        _, then, other = node.args[1].args
        if target and _zero_of(then, target) and isinstance(other, ast.BinOp) \
                and isinstance(other.op, ast.Add) and target in (
                    dotted_name(other.left), dotted_name(other.right)):
            report(node, "GAC109", "the sums start again from zero on the micro-batch that "
                   "applies, without its gradient: each cycle keeps N - 1 of its N")
            return


def _zero_of(expr, target):
    """``target * 0`` or ``K.zeros_like(target)``."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        return number(expr.right) == 0 or number(expr.left) == 0
    return method(expr) == "zeros_like" and expr.args and dotted_name(expr.args[0]) == target


def _global_step_gate(index, method_def, report):
    """The same in a TF1 optimizer's ``apply_gradients(grads_and_vars,
    global_step)`` (AdamAccumulate ported to ``tf.train.Optimizer``):
    ``global_step % N == 0`` reads the step before this one's increment."""
    names = parameter_names(method_def)
    if "global_step" not in names:
        return
    advanced = set(id(n) for n in _advanced_first(index, method_def, "global_step"))
    for test in (n for n in nodes_in(method_def) if _modulo_test(n, ("global_step",))):
        if not any(id(up) in advanced for up in index.ancestors(test)):
            report(test, "GAC109", "`global_step % N == 0` reads the step before this "
                   "step's increment: true at the first micro-batch")


def _never_advanced(index, cls, tests, updates, report):
    """GAC109 at the gate when nothing in the class (nor a base's ``get_updates`` it
    calls) advances the count it gates on, or only under an ``if`` (``if
    self.initial_decay > 0: ... update_add``): ``self.iterations =
    tf.add(self.iterations, 1)`` makes a tensor, it assigns nothing. The
    gate then stays true: every micro-batch applies (a gate that always
    fires, reported where it tests)."""
    if any(isinstance(n, ast.Call) and method(n) == "get_updates"
           and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Call)
           and method(n.func.value) == "super" for n in nodes_in(updates)):
        return False  # (the base class's get_updates advances it)
    advances = [n for n in nodes_in(cls) if _advances(n)]
    if any(not any(isinstance(up, ast.If) for up in index.ancestors(n)) for n in advances):
        return False
    why = "advances only under `if`" if advances else "never advances"
    report(tests[0], "GAC109", "the gate `%s %% N == 0` stays true, so every micro-batch "
           "applies: `%s` %s" % (_COUNTER, _COUNTER, why))
    return True


def _advances(node):
    """``K.update_add(self.iterations, 1)``, ``self.iterations.assign_add(1)``,
    ``K.update(self.iterations, ...)`` or an ``(self.iterations, value)`` update."""
    if isinstance(node, ast.Tuple) and len(node.elts) == 2:
        return dotted_name(node.elts[0]) == _COUNTER
    if not isinstance(node, ast.Call):
        return False
    if method(node) in ("assign_add", "assign") and isinstance(node.func, ast.Attribute) \
            and dotted_name(node.func.value) == _COUNTER:
        return True
    return method(node) in ("update_add", "update", "assign_add", "assign") and bool(
        node.args) and dotted_name(node.args[0]) == _COUNTER


def _sums(updates):
    """The name of the list ``get_updates`` accumulates into (``grads_acc =
    [K.zeros(shape) ...]``), or "gradients"."""
    for node in nodes_in(updates):
        if isinstance(node, ast.Assign) and any(
                isinstance(c, ast.Call) and method(c) in ("zeros", "zeros_like")
                for c in nodes_in(node.value)):
            names = [dotted_name(t) for t in node.targets if dotted_name(t)]
            if names and "acc" in names[0].lower():
                return names[0]
    return "gradients"


def _advanced_first(index, scope, counter=_COUNTER):
    """The ``with tf.control_dependencies([self.iterations.assign_add(1)])``
    blocks in ``scope``: what they read is the advanced count."""
    return set(n for n in nodes_in(scope) if isinstance(n, ast.With) and any(
        isinstance(c, ast.Call) and method(c) == "assign_add"
        and isinstance(c.func, ast.Attribute) and dotted_name(c.func.value) == counter
        for context in with_contexts(n) for c in nodes_in(context)))


def _modulo_test(node, counters):
    """``K.equal(X % N, 0)`` (or ``==``) for X in ``counters``."""
    modulo = modulo_tested(node)
    return modulo is not None and dotted_name(modulo.left) in counters


def _counts_from_iterations(value):
    """``self.iterations + 1`` (or ``K.cast(self.iterations, ...) + 1``)."""
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) \
        and number(value.right) == 1 and any(dotted_name(n) == _COUNTER
                                             for n in nodes_in(value.left))


def _bias_corrects(function, targets):
    """A name bound to the count is raised to by ``K.pow(beta, t)``."""
    names = set(t.id for t in targets if isinstance(t, ast.Name))
    return any(isinstance(n, ast.Call) and method(n) == "pow" and len(n.args) == 2
               and isinstance(n.args[1], ast.Name) and n.args[1].id in names
               for n in nodes_in(function))


def _unmasked_updates(updates, counts, report):
    """GAC102: a parameter's update in a gated ``get_updates`` that the gate
    does not mask (``K.update(p, p - lr_t * m_t / ...)`` with no ``flag *``
    or ``K.switch`` on its way): the weights move on every micro-batch,
    only the moments wait for the cycle."""
    bound = {}
    for node in nodes_in(updates):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            bound.setdefault(node.targets[0].id, []).append(node.value)
    gates, grown = set(), True
    while grown:
        size = len(gates)
        gates |= set(name for name, values in bound.items() for v in values
                     if any(_modulo_test(n, counts) for n in nodes_in(v)) or any(
                         dotted_name(n) in gates for n in [v] + list(getattr(v, "args", ())))
                     and (isinstance(v, ast.Name) or method(v) in ("cast", "equal")))
        grown = len(gates) > size
    params = set(parameter_names(updates)[2:3])  # get_updates(self, loss, params)
    for loop in (n for n in nodes_in(updates) if isinstance(n, ast.For)):
        pairs = loop.iter.args if isinstance(loop.iter, ast.Call) and method(loop.iter) == "zip" \
            else []
        targets = loop.target.elts if isinstance(loop.target, ast.Tuple) else [loop.target]
        weights = [t.id for t, source in zip(targets, pairs)
                   if isinstance(t, ast.Name) and dotted_name(source) in params]
        for call in (n for n in nodes_in(loop) if isinstance(n, ast.Call)
                     and method(n) == "update" and len(n.args) == 2
                     and dotted_name(n.args[0]) in weights):
            if gates and not _masked(call.args[1], gates, bound, 6):
                report(call, "GAC102", _sums(updates), ": the weights' update is not masked "
                       "by the gate (only the moments wait for the cycle)")


def _masked(expr, gates, bound, depth):
    """A gate name (or a ``K.switch``) in ``expr`` itself or in what the
    names it is bound to, through plain renames and calls, hold."""
    if any((isinstance(n, ast.Name) and n.id in gates)
           or (isinstance(n, ast.Call) and method(n) in ("switch", "cond", "where"))
           for n in nodes_in(expr)):
        return True
    if depth <= 0:
        return False
    names = [expr] if isinstance(expr, ast.Name) else [
        a for a in getattr(expr, "args", ()) if isinstance(a, ast.Name)]
    return any(_masked(value, gates, bound, depth - 1)
               for name in names for value in bound.get(name.id, ()) if value is not expr)

