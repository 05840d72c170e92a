"""Where ``lint`` finds the gradients divided by N (GAC101, GAC108): in
the expressions on their way (not the mean over GPU towers of one
micro-batch), by a ``dict`` entry the file maps to ``1. / N``, by the
file's own accumulator class as it adds, by ``grad /= N`` before the add,
or where the sums are kept (``acc.assign(acc / N)``).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import (dotted_name, method, nodes_in, parameter_names,
                                             string_of, update_hooks)
from gradacc_compat.lint.exprs import accumulation, divides_by_n, is_division, loads, n_names
from gradacc_compat.lint.plain_steps import one_step_arm
from gradacc_compat.lint.accumulates import HELPER_ADDS, HELPER_READS

__all__ = ["divides", "divided_at_add", "in_update_hook", "lr_compensated",
           "normalized_in_place", "on_every_path"]

def divided_at_add(index, add):
    """The gradient ``add`` adds is divided on its way in (or weighted:
    ``g * self.accum_weight``, a fraction fed per micro-batch)."""
    return index.memo(("divides", id(add)), lambda: _divided_at_add(index, add))


def _divided_at_add(index, add):
    chain = index.sources(add.value, add.value)[1]
    return any(divides(index, e) and not _subtracted(index, e, chain) for e in chain) \
        or _divided_before(index, add) or _helper_divides(index, add) or _weighted(add.value)


def _subtracted(index, expr, chain):
    """``expr`` is bound to a name the chain only subtracts (``baseline =
    np.mean(returns)``, then ``returns - baseline``): a centring, which
    scales nothing."""
    bound = index.parents.get(expr)
    if not (isinstance(bound, ast.Assign) and len(bound.targets) == 1
            and isinstance(bound.targets[0], ast.Name)):
        return False
    name = bound.targets[0].id
    uses = [(n, e) for e in chain if isinstance(e, ast.AST) for n in nodes_in(e)
            if isinstance(n, ast.Name) and n.id == name]
    return bool(uses) and all(
        isinstance(index.parents.get(n), ast.BinOp) and isinstance(index.parents[n].op, ast.Sub)
        and index.parents[n].right is n for n, _ in uses)


def _weighted(value):
    """``g * w`` with ``w`` named as a weight or scale of its own."""
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult) and any(
        word in (dotted_name(side) or "").split(".")[-1].lower()
        for side in (value.left, value.right)
        for word in ("weight", "scale", "coef", "factor", "ratio", "frac"))


def on_every_path(index, expr, at, depth=8):
    """``expr`` (at ``at``) is divided on every path that reaches it: it
    divides, or each binding of a name it reads does (``if post: sums =
    [s / N ...]`` then the apply of ``sums`` leaves the other path
    undivided). ``grads = f(grads)`` rebinding one name is no hop."""
    return index.memo(("every path", id(expr), id(at), depth),
                      lambda: _on_every_path(index, expr, at, depth, None, frozenset()))


def _on_every_path(index, expr, at, depth, bound, walking):
    if divides(index, expr) or _divides_when_called(index, expr):
        return True
    if depth <= 0:
        return False
    for load in loads(expr, settings=False):
        if isinstance(load, ast.Attribute) and load.attr in HELPER_READS \
                and isinstance(load.value, ast.Name):
            load = load.value
        if not isinstance(load, ast.Name):
            continue
        values = [(v, node) for v, node in index.values_of(load.id, at) if not _empty(v)]
        # (a helper's callers that hand it no sums, ``self._apply(grads)``
        # when there is nothing to accumulate, are no path of the sums)
        values = [pair for pair in values if not _foreign_argument(index, *pair)] or values
        # (``if N == 1: loss, grads = step(x)``: that path, and what the step
        # returns there, has nothing to divide)
        single = [index.callee(v) for v, node in values if one_step_arm(index, node)
                  and isinstance(v, ast.Call)]
        values = [(v, node) for v, node in values if not one_step_arm(index, node) and not (
            isinstance(node, ast.Return) and index.function_of(node) in single)] or values
        # (``grads = self._clip(grads)`` of grads divided on every path: the
        # helper hands back what it was given, clipped; what its other
        # callers hand it is theirs)
        passed = [index.callee(v) for v, _ in values if isinstance(v, ast.Call)
                  and index.callee(v) is not None and v.args
                  and _on_every_path(index, v.args[0], v, depth - 1, None, walking)]
        values = [(v, node) for v, node in values
                  if not any(index.function_of(node) is f or index.callee(v) is f for f in passed)]
        if passed and not values:
            return True
        # (``loss, grads = helper(x)``: the path is what the helper returns
        # there, not the call)
        values = [(v, node) for v, node in values if not (
            isinstance(v, ast.Call) and index.callee(v) is not None and any(
                index.function_of(other) is index.callee(v) for _, other in values))]
        left = depth if load.id == bound else depth - 1
        # (a binding met again on the walk, ``sums = [s + g ...]`` read in
        # its own loop, adds no path: the others decide)
        divided = [key in walking or index.memo(
            ("every path",) + key + (load.id,), lambda v=v, node=node, key=key: _on_every_path(
                index, v, node, left, load.id, walking | frozenset([key])))
            for v, node, key in ((v, node, (id(v), id(node), left)) for v, node in values)]
        # (``if accum_steps > 1: grads = [g / N ...]``: the path around it
        # runs when N is 1, where dividing changes nothing)
        guards = [up.lineno for d, (_, node) in zip(divided, values) if d
                  for up in index.ancestors(node) if isinstance(up, ast.If)
                  and accumulation(up.test) and any(node is n for s in up.body
                                                    for n in nodes_in(s))]
        if guards:
            kept = [i for i, (_, node) in enumerate(values) if node.lineno >= min(guards)]
            divided, values = [divided[i] for i in kept], [values[i] for i in kept]
        # (what is appended to one list, ``pairs.append((g / N, v))`` and
        # ``pairs.append((None, v))`` for a missing gradient, is one path)
        appended = [d for d, (_, node) in zip(divided, values)
                    if isinstance(node, ast.Call) and method(node) == "append"]
        others = [d for d, (_, node) in zip(divided, values)
                  if not (isinstance(node, ast.Call) and method(node) == "append")]
        if values and all(others) and (not appended or any(appended)):
            return True
    return False


def _divides_when_called(index, expr):
    """``expr`` calls a function of the file (a def, or a lambda bound to a
    name: ``scale = lambda L: [x / N for x in L]``) whose every returned
    value divides."""
    if not isinstance(expr, ast.Call):
        return False
    function = index.callee(expr)
    if function is not None:
        bodies = [n.value for n in index.statements_of(function)
                  if isinstance(n, ast.Return) and n.value is not None]
    elif isinstance(expr.func, ast.Name):
        bodies = [v.body for v, _ in index.values_of(expr.func.id, expr)
                  if isinstance(v, ast.Lambda)]
    else:
        bodies = []
    return bool(bodies) and all(divides(index, b) for b in bodies)


def _foreign_argument(index, value, node):
    """``value`` is what the call ``node`` hands a parameter, and none of
    the file's sums flows into it."""
    return isinstance(node, ast.Call) and method(node) != "append" \
        and not index.sources(value, node)[0] & index.accumulators


def _empty(value):
    """``[]``, ``()``, ``{}`` or ``None`` (or a tuple of them): a binding no
    gradient comes by (``pairs = []`` before ``pairs.append((g / N, v))``)."""
    if isinstance(value, ast.Tuple) and value.elts:  # (``grads, heads = [], []``)
        return all(_empty(e) for e in value.elts)
    if isinstance(value, (ast.List, ast.Tuple, ast.Dict)):
        return not (getattr(value, "elts", None) or getattr(value, "keys", None))
    return getattr(value, "value", 0) is None or getattr(value, "id", "") == "None"


#: Calls that make a variable: a division in them sets where it starts.
_MADE = ("Variable", "get_variable")
_SGD = ("SGD", "GradientDescentOptimizer", "MomentumOptimizer")
_ADAPTIVE = ("Adam", "AdamOptimizer", "AdamW", "Adagrad", "AdagradOptimizer", "RMSprop",
             "RMSPropOptimizer", "Nadam", "Adamax", "Adadelta", "LAMB", "Lamb", "Ftrl")


def lr_compensated(index):
    """The learning rate divided by the number of micro-batches in a file
    whose optimizers are all plain or momentum SGD: there the step of the
    sum at lr / N is the step of the mean at lr (for Adam it is not)."""
    return index.memo("lr compensated", lambda: _lr_compensated(index))


def _lr_compensated(index):
    made = set(method(c) for c in index.calls)
    if not made & set(_SGD) or made & set(_ADAPTIVE):
        return False
    bounds = set(dotted_name(a) for c in index.calls if method(c) == "range"
                 for a in c.args if dotted_name(a))
    for node in index.assigns + index.calls:
        if isinstance(node, ast.Call):
            target = node.func.value if method(node) == "assign" \
                and isinstance(node.func, ast.Attribute) else None
            value = node.args[0] if node.args else None
        else:
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            value = node.value
        name = (dotted_name(target) or "").split(".")[-1].lower() if target is not None else ""
        if not ("lr" in name.split("_") or "learning_rate" in name) or value is None:
            continue
        divisors = [dotted_name(n.right) or "" for n in nodes_in(value)
                    if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)]
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div):
            divisors.append(dotted_name(node.value) or "")
        if any(d and any(b in d for b in bounds) for d in divisors):
            return True
    return False


def in_update_hook(index, apply):
    """``super().apply_gradients(...)`` in an optimizer subclass whose own
    ``_resource_apply_dense`` (or ``_apply_dense``) divides the ``grad`` it
    is handed: the parent's apply runs that hook, so the sums are divided
    on their way to the update."""
    func = apply.node.func
    if not (isinstance(func, ast.Attribute) and method(func.value) == "super"):
        return False
    for hook in update_hooks(index.class_of(apply.node)):
        grad = (parameter_names(hook)[1:2] or [None])[0]
        if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)
               and dotted_name(n.left) == grad for n in nodes_in(hook)):
            return True
    return False


def divides(index, expr):
    """A division of the gradients, not the mean over GPU towers of one
    micro-batch (``average_gradients(tower_grads)``, copied from TF's
    multi-GPU example): that one still leaves N micro-batches summed."""
    if is_division(expr):
        return not _tower_mean(index, expr)
    keyed = index.memo("keyed divisions", lambda: _keyed_divisions(index))
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and any(
        isinstance(side, ast.Subscript) and string_of(side.slice) in keyed
        for side in (n.left, n.right)) for n in nodes_in(expr))


def _keyed_divisions(index):
    """The string keys a dict of the file maps to a quotient
    (``{'grad_scaler': 1. / N}``, or a name bound to one): ``g *
    coefficients['grad_scaler']`` divides (Keras's ``apply_state``)."""
    found = set()
    for node in index.nodes:
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values):
            text = string_of(key)
            if text is None or not isinstance(value, (ast.Name, ast.BinOp, ast.Call)):
                continue
            values = index.values_of(value.id, node) if isinstance(value, ast.Name) \
                else [(value, node)]
            if any(is_division(v) for v, _ in values):
                found.add(text)
    return found


def _tower_mean(index, node):
    function = index.function_of(node)
    if function is None or isinstance(function, ast.Lambda):
        return False
    words = [function.name] + parameter_names(function)
    return any("tower" in (w or "").lower() for w in words)


def _helper_divides(index, add):
    """``self.acc(grads)`` where ``self.acc = Accumulator(N)`` of a class
    of this file whose own sums are divided as they are added
    (``g * self._factor`` with ``self._factor = 1. / N``); or a helper of
    another module handed N (``grads = accumulated_gradients(grads, g, N)``)."""
    call = add.node
    if isinstance(call, ast.Assign) and isinstance(call.value, ast.Call) \
            and len(call.value.args) == 3 and index.callee(call.value) is None:
        return divides_by_n(ast.BinOp(left=call.value.args[1], op=ast.Div(),
                                      right=call.value.args[2]), n_names(index))
    if not isinstance(call, ast.Call):
        return False
    receiver = dotted_name(call.func.value if method(call) in HELPER_ADDS
                           and isinstance(call.func, ast.Attribute) else call.func)
    classes = index.memo("classes", lambda: dict(
        (c.name, c) for c in index.nodes if isinstance(c, ast.ClassDef)))
    made = [classes.get(name) for name in index.memo("made by calls", lambda: _made_by_calls(
        index)).get(receiver, ())] if receiver else []
    for cls in (c for c in made if c is not None):
        halves = dict((dotted_name(t), n.value) for n in nodes_in(cls)
                      if isinstance(n, ast.Assign) for t in n.targets)
        for inner in index.accumulates:
            if inner.function is None or index.class_of(inner.function) is not cls:
                continue
            exprs = index.sources(inner.value, inner.value)[1]
            read = set(dotted_name(n) for e in exprs for n in nodes_in(e))
            if any(divides(index, e) for e in exprs) or any(
                    name in halves and is_division(halves[name]) for name in read):
                return True
    return False


def _made_by_calls(index):
    """``{target: [the last part of the callee's name]}`` for ``x = F(...)``."""
    found = {}
    for n in index.assigns:
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
            for t in n.targets:
                found.setdefault(dotted_name(t), []).append(
                    (dotted_name(n.value.func) or "").split(".")[-1])
    return found


def _divided_before(index, add):
    """``grad /= N`` on the name ``add`` adds, earlier in its function, or
    ``grads[i] = grads[i] / N`` (``= self.scale * grads[i]``) on an item of it."""
    names = set(n.id for n in nodes_in(add.value) if isinstance(n, ast.Name))
    divisions = index.memo(("/=", id(add.function)), lambda: [
        (n.target.id, n) for n in index.statements_of(add.function)
        if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Div)
        and isinstance(n.target, ast.Name)] + [
        (n.targets[0].value.id, n) for n in index.statements_of(add.function)
        if isinstance(n, ast.Assign) and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Subscript) and isinstance(n.targets[0].value, ast.Name)
        and (is_division(n.value) or _weighted(n.value))])
    return any(name in names and n.lineno < add.node.lineno for name, n in divisions)


def normalized_in_place(index, keys, by_n=False):
    """The sums divided where they are kept (``acc /= N``, ``acc = acc /
    N``, ``acc.assign(acc / N)``), outside a tower mean."""
    return index.memo(("in place", frozenset(keys), by_n),
                      lambda: _find_normalized(index, keys, by_n))


def _find_normalized(index, keys, by_n):
    test = (lambda e: divides_by_n(e, n_names(index))) if by_n else is_division
    for node in index.assigns + index.calls:
        if _tower_mean(index, node):
            continue
        if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Div, ast.Mult)) \
                and index.key(node.target) in keys \
                and (isinstance(node.op, ast.Div) or test(node.value)):
            return True
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and not isinstance(node.targets[0], ast.Name) \
                and index.key(node.targets[0]) in keys and test(node.value) \
                and method(node.value) not in _MADE:  # (``self.b = tf.Variable(init / 5)``)
            return True  # (a local name rebound is followed path by path: on_every_path)
        if isinstance(node, ast.Call) and method(node) in ("assign", "update") and node.args:
            if isinstance(node.func, ast.Attribute) and method(node) == "assign" \
                    and dotted_name(node.func) not in ("tf.assign", "tf.compat.v1.assign"):
                owner, value = node.func.value, node.args[0]
            elif len(node.args) > 1:
                owner, value = node.args[0], node.args[1]
            else:
                continue
            if index.key(owner) in keys and test(value):
                return True
    return False

