"""``lint``'s checks of state that is not an accumulator's:

* GAC103  the model's own weights assigned zeros to "reset" accumulators
          (only where the loop runs over a model's variables:
          ``model.trainable_variables``, not a parameter named ``variables``);
* GAC105  Python state changed inside a ``tf.function`` (or a Keras
          ``train_step``, which ``fit`` traces), where the change happens once,
          at tracing: ``self.count += 1`` on a Python number, a counter
          declared ``global``, a list argument rebound and not returned.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import (FUNCTIONS, NAMED, NUMBER, dotted_name, method,
                                             nodes_in, parameter_names, walk)
from gradacc_compat.lint.exprs import literal
from gradacc_compat.lint.traced import traced_functions

__all__ = ["check"]

_MODEL_WEIGHTS = ("trainable_variables", "trainable_weights", "variables", "weights")


def _zeroed_weights(nodes, report):
    for node in nodes:
        if isinstance(node, ast.For):
            target, iterable, body = node.target, node.iter, node.body
        elif isinstance(node, ast.ListComp):
            generator = node.generators[0]
            target, iterable, body = generator.target, generator.iter, [node.elt]
        else:
            continue
        name = dotted_name(iterable) or ""
        if "." not in name or name.rsplit(".", 1)[1] not in _MODEL_WEIGHTS \
                or not isinstance(target, ast.Name) or _own_state(nodes, node, name):
            continue
        for stmt in body:
            for sub in walk(stmt, FUNCTIONS):
                if (method(sub) == "assign" and isinstance(sub.func, ast.Attribute)
                        and dotted_name(sub.func.value) == target.id and sub.args
                        and method(sub.args[0]) in ("zeros_like", "zeros")):
                    report(sub, "GAC103", "%s.assign(...)" % target.id)


def _own_state(nodes, loop, name):
    """``self.variables`` of a class that is no model (a Keras metric's
    ``reset_state``): its own counters, not a model's weights."""
    if not name.startswith("self.") or name.count(".") != 1:
        return False
    for cls in (c for c in nodes if isinstance(c, ast.ClassDef)):
        if any(n is loop for n in nodes_in(cls)):
            return not any((dotted_name(b) or "").endswith("Model") for b in cls.bases)
    return False


def _python_numbers(nodes):
    """``self.X`` attributes and module names bound to number literals."""
    found = set()
    for node in nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, NUMBER) \
                and not isinstance(getattr(node.value, "value", 0), (str, bytes)):
            for target in node.targets:
                name = dotted_name(target)
                if name:
                    found.add(name)
    return found


def _variables(nodes):
    """``self.X`` attributes bound to a ``tf.Variable`` (or ``add_weight``)."""
    return set(dotted_name(t) for node in nodes if isinstance(node, ast.Assign)
               and method(node.value) in ("Variable", "add_weight")
               for t in node.targets if (dotted_name(t) or "").startswith("self."))


def _stale_state(index, report):
    nodes = index.nodes
    numbers, variables = _python_numbers(nodes), _variables(nodes)
    traced = traced_functions(nodes)
    for function in nodes:
        if not isinstance(function, FUNCTIONS) or id(function) not in traced \
                or _plain_step(index, function):
            continue  # (``self.step += 1`` in a plain step beside one that accumulates)
        declared = set()
        for node in walk(function, FUNCTIONS[:-1]):
            if isinstance(node, (ast.Global, getattr(ast, "Nonlocal", ast.Global))):
                declared.update(node.names)
        params = set(parameter_names(function))
        returned = set(n.id for r in walk(function, FUNCTIONS) if isinstance(r, ast.Return)
                       and r.value is not None for n in nodes_in(r.value)
                       if isinstance(n, ast.Name))
        # (sums the function applies on every call, not under an ``if``, are
        # not lost with the trace)
        returned |= set(n.id for s in getattr(function, "body", []) if isinstance(s, ast.Expr)
                        and method(s.value) == "apply_gradients" for n in nodes_in(s.value)
                        if isinstance(n, ast.Name))
        for node in walk(function, FUNCTIONS):
            if node is function:
                continue
            target = None
            if isinstance(node, ast.AugAssign):
                target = node.target
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.value, (ast.ListComp, ast.BinOp) + NAMED + NUMBER):
                target = node.targets[0]
            name = dotted_name(target) if target is not None else None
            if not name:
                continue
            # (``train_step.count += 1``: an attribute of the traced function
            # itself is Python state as much as ``self.count`` is)
            if (isinstance(node, ast.AugAssign) or _steps_itself(node, name)) and (
                    (name.split(".")[0] in ("self", function.name) and name in numbers)
                    or name in declared):
                report(node, "GAC105", name, function.name)
            elif isinstance(node, ast.Assign) and name in params and name not in returned \
                    and _adds_to_itself(node.value, name):
                # (the caller's list is not the one this builds: ``grads = [g[0]
                # for g in pairs]`` is a local name, no sum is lost)
                report(node, "GAC105", name, function.name)
            elif isinstance(node, ast.Assign) and name in variables \
                    and isinstance(node.value, NUMBER):
                # self.count = 0 where self.count is a tf.Variable: the trace
                # swaps the variable for a constant, once; .assign(0) resets
                report(node, "GAC105", name, function.name)
            elif isinstance(node, ast.Assign) and name.startswith("self.") \
                    and name.count(".") == 1 and _zeros_added_to(function, node.value, name):
                # self.sums = [tf.zeros_like(g) ...] then self.sums[i].assign_add(g):
                # tensors made once, at tracing, not variables
                report(node, "GAC105", name, function.name)
            elif isinstance(node, ast.Assign) and _flag_flipped(index, node, name, function):
                # ``if self.first_call: self.first_call = False; <reset>``: the
                # trace flips it once and keeps the branch, on every call
                report(node, "GAC105", name, function.name)
            elif isinstance(node, ast.Assign) and name.startswith("self.") \
                    and name.count(".") == 1 and _adds_to_itself(node.value, name):
                # self.sums = [a + g for a, g in zip(self.sums, grads)]: a Python
                # list of the trace's tensors, built once
                report(node, "GAC105", name, function.name)


def _flag_flipped(index, node, name, function):
    """``if self.first_call: self.first_call = False; v.assign(...)`` in
    the traced ``function``: a Python bool made ``True`` elsewhere, turned
    off under an ``if`` that tests it and also runs TF updates (resets),
    which the trace keeps, so they run on every call."""
    if not (name.startswith("self.") and name.count(".") == 1 and literal(node.value) is False):
        return False
    bound = [literal(n.value) for n in index.assigns if isinstance(n, ast.Assign)
             and any(dotted_name(t) == name for t in n.targets)]
    return all(isinstance(v, bool) for v in bound) and True in bound and any(
        isinstance(up, ast.If) and any(dotted_name(n) == name for n in nodes_in(up.test))
        and any(method(c) in ("assign", "assign_add", "assign_sub") for c in nodes_in(up))
        for up in index.ancestors(node) if index.function_of(up) is function)


def _zeros_added_to(function, value, name):
    """``value`` is a list of zero tensors (``[tf.zeros_like(g) ...]``, no
    ``tf.Variable``) and ``function`` adds to its elements in place."""
    if not isinstance(value, (ast.ListComp, ast.List)) or any(
            method(n) == "Variable" for n in nodes_in(value) if isinstance(n, ast.Call)) \
            or not any(method(n) in ("zeros_like", "zeros")
                       for n in nodes_in(value) if isinstance(n, ast.Call)):
        return False
    names = set([name])  # (and the loop names that walk it: ``for acc, g in zip(self.sums, ...)``)
    for loop in nodes_in(function):
        if isinstance(loop, (ast.For, ast.comprehension)) and any(
                dotted_name(n) == name for n in nodes_in(loop.iter)):
            target = loop.target.elts[0] if isinstance(loop.target, ast.Tuple) else loop.target
            names.add(dotted_name(target))
    for call in nodes_in(function):
        if isinstance(call, ast.Call) and method(call) == "assign_add" \
                and isinstance(call.func, ast.Attribute):
            owner = call.func.value
            while isinstance(owner, ast.Subscript):
                owner = owner.value
            if dotted_name(owner) in names:
                return True
    return False


def _steps_itself(node, name):
    """``self.k = self.k + 1`` (an ``+=`` spelt out)."""
    value = node.value if isinstance(node, ast.Assign) else None
    return isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub)) \
        and dotted_name(value.left) == name and isinstance(value.right, NUMBER)


def _adds_to_itself(value, name):
    """``[a + g for a, g in zip(<name>, ...)]`` (a list comprehension over
    the attribute itself, adding to each element)."""
    if not isinstance(value, ast.ListComp):
        return False
    reads = any(dotted_name(n) == name for g in value.generators for n in nodes_in(g.iter))
    adds = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add) for n in nodes_in(value.elt))
    return reads and adds


def _plain_step(index, function):
    """``function`` applies (``minimize``, ``apply_gradients``) and neither it
    nor a method it calls accumulates or applies sums: a step of its own,
    whose Python state is no accumulation's."""
    applies = any(method(n) in ("minimize", "apply_gradients") for n in walk(function, FUNCTIONS))
    return applies and not _accumulation_in(index, function)


def _accumulation_in(index, function):
    """``function``, or a method it calls as ``self.name(...)`` (or hands to
    ``tf.cond``), accumulates or applies sums."""
    scopes = set(id(index.function_of(a.node)) for a in index.accumulates) | set(
        id(a.function) for a in index.applies if a.keys & index.accumulators)
    methods = dict((f.name, f) for f in getattr(index.class_of(function), "body", [])
                   if isinstance(f, FUNCTIONS[:-1]))
    called = [methods.get((dotted_name(n) or "")[5:]) for n in walk(function, FUNCTIONS)
              if isinstance(n, ast.Attribute) and (dotted_name(n) or "").startswith("self.")]
    return any(id(f) in scopes for f in [function] + [c for c in called if c is not None])


def check(index, report):
    _zeroed_weights(index.nodes, report)
    _stale_state(index, report)
