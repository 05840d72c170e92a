"""``lint``'s GAC102 for an optimizer subclass that gates its update on
the micro-step (a method that ``tf.cond``s between applying and adding to
a slot, as tensor2tensor's ``MultistepAdamOptimizer._apply_cond`` does),
routes some update hooks through that gate (``_apply_sparse``) and
overrides another to apply directly (``_resource_apply_dense`` returning
``training_ops.resource_apply_adam(...)``): that hook applies on every
micro-batch, and its variables never see the accumulated sum. Also a
function handed to ``tf.cond`` as the branch that applies, and called
directly as well, unguarded, where the sums are added
(``with tf.control_dependencies([apply_grads()])``): it applies on every
micro-batch.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.accumulates import label
from gradacc_compat.lint.ast_helpers import dotted_name, method, nodes_in

__all__ = ["bypassed_gates"]

_HOOKS = ("_apply_dense", "_resource_apply_dense", "_apply_sparse", "_resource_apply_sparse",
          "_apply_sparse_shared", "_resource_apply_sparse_duplicate_indices")


def bypassed_gates(index, report):
    _branch_also_called(index, report)
    for cls in (c for c in index.nodes if isinstance(c, ast.ClassDef)):
        methods = dict((f.name, f) for f in cls.body if isinstance(f, ast.FunctionDef))
        gates = dict((f.name, _added(f)) for f in methods.values() if f.name not in _HOOKS
                     and any(method(c) == "cond" for c in nodes_in(f)) and _added(f))
        routed = [h for h in _HOOKS if h in methods and _calls(methods[h], gates)]
        if not gates or not routed:
            continue
        for hook in (methods[h] for h in _HOOKS if h in methods and h not in routed):
            applies = [c for r in nodes_in(hook) if isinstance(r, ast.Return) and r.value
                       for c in nodes_in(r.value) if isinstance(c, ast.Call)
                       and "apply" in (method(c) or "") and method(c) not in _HOOKS]
            if applies and not any(method(c) == "cond" for c in nodes_in(hook)):
                gate = sorted(gates)[0]
                report(applies[0], "GAC102", gates[gate], ": `%s` applies directly, past the "
                       "class's own gate `%s` that `%s` goes through" % (hook.name, gate,
                                                                        routed[0]))


def _added(function):
    """The name of the slot ``function`` adds to (``tf.assign_add(acc, g)``,
    ``acc.assign_add(g)``), else None."""
    for call in (c for c in nodes_in(function) if isinstance(c, ast.Call)):
        if method(call) == "assign_add":
            target = call.args[0] if dotted_name(call.func) in (
                "tf.assign_add", "tf.compat.v1.assign_add", "state_ops.assign_add") and call.args \
                else getattr(call.func, "value", None)
            name = dotted_name(target) if target is not None else None
            if name:
                return name.split(".")[-1]
    return None


def _calls(function, names):
    """``function`` calls (or hands on) ``self.<name>`` for one of ``names``."""
    return any(isinstance(n, ast.Attribute) and dotted_name(n.value) == "self"
               and n.attr in names for n in nodes_in(function))


def _branch_also_called(index, report):
    """GAC102 at the direct call of a ``tf.cond`` branch that applies."""
    for apply in index.applies:
        function = index.function_of(apply.node)
        cond = index.branch_call(function) if isinstance(function, ast.FunctionDef) else None
        holder = index.function_of(cond) if cond is not None else None
        adds = [a for a in index.accumulates if holder is not None and a.function is holder]
        direct = [c for c in index.callers(function) if index.function_of(c) is holder
                  and c is not cond and not index.locally_guarded(c)] if adds else []
        if direct:
            report(direct[0], "GAC102", label(adds[0]), ": `%s`, the branch `tf.cond` runs "
                   "when a cycle ends, is also called directly" % function.name)
