"""Where one file's gradients are summed into accumulators: ``acc +=
g``, ``acc.assign_add(g)``, ``acc.assign(acc + g)``, ``K.update(acc, acc +
g)``, ``[a + g for a, g in zip(acc, grads)]``, a helper object's
``add_gradients(grads)`` or ``accumulator(grads)``. A mixin of
``flow.Index``, whose keys, loads and sources it reads.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint import parameters
from gradacc_compat.lint.ast_helpers import NUMBER, dotted_name, method, nodes_in, parameter_names
from gradacc_compat.lint.branches import branch_function
from gradacc_compat.lint.exprs import GRADIENT_CALLS

__all__ = ["Accumulate", "Accumulates", "HELPER_ADDS", "HELPER_READS", "label"]

_LIST_COMPREHENSION = (ast.ListComp,)

#: A helper object's methods that add a micro-batch's gradients to it (and
#: ``acc(grads)`` for an object whose name says accumulator), and the
#: attributes that read its sums.
HELPER_ADDS = ("add_gradients", "accumulate", "accumulate_gradients", "add_grads")
HELPER_READS = ("gradients", "grads", "accumulated_gradients", "accum_grads")


#: Attributes that name a model's list of variables, not gradients.
_VARIABLE_LISTS = ("trainable_variables", "trainable_weights", "variables", "weights",
                   "parameter_list", "parameters", "params", "var_list")


class Accumulate(object):
    """``key`` receives ``value`` (a gradient) at ``node`` in ``function``."""

    def __init__(self, key, node, function, value):
        self.key, self.node, self.function, self.value = key, node, function, value


def label(add):
    """How a finding names the accumulator ``add`` writes."""
    key = add.key
    return "self." + key[2] if key[0] == "self" else key[-1]


class Accumulates(object):
    """The accumulations of ``flow.Index`` (a mixin: ``self`` is the index)."""

    def _find_accumulates(self):
        found = []
        differentiates = any(method(c) in GRADIENT_CALLS for c in self.calls)
        for node in self.nodes:
            target, value = None, None
            if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
                target, value = node.target, node.value
            elif isinstance(node, ast.Call) and _handed(node) is not None and self.called(
                    node) not in ("assign_add", "assign") and (
                    len(node.args) <= 1 or parameters.differentiated(self, node.args[0])) and (
                    (method(node) in HELPER_ADDS and isinstance(node.func, ast.Attribute))
                    or (_accumulator_named(dotted_name(node.func))
                        and isinstance(node.func, (ast.Name, ast.Attribute))
                        and not (dotted_name(node.func) or "").startswith("tf."))):
                # acc.add_gradients(grads) / self.accumulator(grads): a helper
                target = node.func.value if method(node) in HELPER_ADDS \
                    and isinstance(node.func, ast.Attribute) else node.func
                value = _handed(node)
            elif isinstance(node, ast.Call) and self.called(node) == "assign_add" and node.args:
                if isinstance(node.func, ast.Attribute) and dotted_name(node.func) not in (
                        "tf.assign_add", "tf.compat.v1.assign_add"):
                    target, value = node.func.value, node.args[0]
                elif len(node.args) > 1:
                    target, value = node.args[0], node.args[1]
            elif isinstance(node, ast.Call) and method(node) in ("update_add",) \
                    and len(node.args) > 1:
                target, value = node.args[0], node.args[1]
            elif isinstance(node, ast.Call) and method(node) in ("assign", "update") \
                    and node.args:
                # acc.assign(acc + g) / K.update(acc, acc + g)
                # (``state_ops.assign(acc, acc + g)``: a function of two)
                if method(node) == "assign" and isinstance(node.func, ast.Attribute) \
                        and dotted_name(node.func) not in ("tf.assign", "tf.compat.v1.assign") \
                        and len(node.args) == 1:
                    target, value = node.func.value, node.args[0]
                elif len(node.args) > 1:
                    target, value = node.args[0], node.args[1]
                value = self._added(target, value)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                value = self._added(target, node.value)
            if target is None or value is None or isinstance(value, NUMBER + (ast.List,)):
                continue  # (``names += [var]`` extends a list, it sums nothing)
            if isinstance(node, ast.AugAssign) and isinstance(value, ast.Call) and (
                    not differentiates or not parameters.differentiated(self, value)):
                continue  # (``var_list += get_collection(...)``: no gradient comes in)
            if any(method(c) in ("float", "int", "item") for c in _factors(value)):
                continue  # (``total += float(result["loss"]) * scale``: a Python number)
            if isinstance(node, ast.AugAssign) and (dotted_name(value) or "").rsplit(
                    ".", 1)[-1] in _VARIABLE_LISTS:
                continue  # (``self.parameter_list += block.parameter_list``: variables)
            if self._model_weight(target):
                continue  # (``param.assign_add(e_w)``: a weight moved, as SAM does; no sum)
            key = self.key(target)
            if key is not None and "loss" not in str(key[-1]).lower() and not (
                    isinstance(node, ast.Call) and method(node) == "assign_add"
                    and key in self.keys_in(value)):  # (a summed loss is no sum of gradients)
                # (``acc.assign_add(acc / n)`` adds the sum to itself: no gradient)
                found.append(Accumulate(key, node, self.function_of(node), value))
        return found + self._loop_carried()

    def _model_weight(self, target):
        """``target`` walks the model's own trainable weights (``for g, p in
        zip(grads, model.trainable_variables)``): what an apply updates."""
        item = self.loop_item(target) if isinstance(target, ast.Name) else None
        name = (dotted_name(item.func if isinstance(item, ast.Call) else item) or "").lower()
        # (also a name for them: ``for v, e_w in zip(trainable_vars, e_ws)``, SAM's step)
        return any(w in name.rsplit(".", 1)[-1] for w in ("trainable_var", "trainable_weight"))

    def _added(self, target, value):
        """What ``value`` adds to ``target`` when it is ``target + g``,
        ``tf.add(target, g)`` or ``[a + g for a, g in ...]``, else None."""
        if value is None or target is None:
            return None
        expr = value
        bound = self.bound_once(expr)  # (``s = g + acc; acc.assign(s)``; not ``m_t = b * m``)
        if isinstance(bound, ast.BinOp) and isinstance(bound.op, ast.Add) \
                and dotted_name(target) in (dotted_name(bound.left), dotted_name(bound.right)):
            expr = bound
        appended = self._appended_sum(target, value) if isinstance(value, ast.Name) else None
        if appended is not None:
            return appended  # (``new = []``, appended to, then ``acc = new``)
        if method(expr) in ("list", "tuple") and len(expr.args) == 1 and isinstance(
                expr.args[0], _LIST_COMPREHENSION + (ast.GeneratorExp,)):
            expr = expr.args[0]  # (``list(a + g for a, g in zip(accs, grads))``)
        if isinstance(expr, _LIST_COMPREHENSION + (ast.GeneratorExp,)):
            expr = expr.elt
        if isinstance(expr, ast.IfExp):  # [(a + g) if g is not None else None ...]
            expr = expr.body if self._added(target, expr.body) else expr.orelse
            return self._added(target, expr) if expr is not value else None
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            left, right = expr.left, expr.right
        elif isinstance(expr, ast.Call) and len(expr.args) == 2 and any(
                w in (method(expr) or "") for w in ("merge_grad", "sum_grad", "add_grad")):
            left, right = expr.args  # (``grads = self.merge_grads(grads, new_grads)``)
        elif isinstance(expr, ast.Call) and len(expr.args) in (2, 3) \
                and _accumulator_named(dotted_name(expr.func)) and self.callee(expr) is None \
                and dotted_name(expr.args[0]) == dotted_name(target):
            # (``grads = accumulated_gradients(grads, g, N)``, a helper of
            # another module; handed N, it divides: ``divisions`` says so)
            return expr.args[1]
        elif isinstance(expr, ast.Call) and method(expr) == "map_structure" \
                and len(expr.args) == 3 and _adds(expr.args[0]):
            left, right = expr.args[1:]  # (``tf.nest.map_structure(lambda a, g: a + g, ...)``)
        elif isinstance(expr, ast.Call) and method(expr) in ("add", "add_n") and expr.args:
            items = expr.args[0].elts if method(expr) == "add_n" and isinstance(
                expr.args[0], (ast.List, ast.Tuple)) else expr.args
            if len(items) != 2:
                return None
            left, right = items[0], items[1]
        else:
            return None
        own = self.key(target)
        if own is None:
            return None
        for this, other in ((left, right), (right, left)):
            if _decayed(this) and own in self.keys_in(this):
                return None  # (``e = gamma * lambda_ * e + g``: a trace, no sum of N)
            if own in self.keys_in(this) or self._is_alias_of(this, own) or (
                    isinstance(this, ast.Name) and own in self.sources(this, target, 1)[0]):
                return other  # (``prev = acc * keep; acc.assign(g + prev)`` too)
        return None

    def _appended_sum(self, target, name):
        """``new.append(a + g)`` in a loop over ``zip(target, grads)``, for
        ``target = new`` (a list made empty, then the sums): what it adds."""
        bound = self.values_of(name.id, name)
        if not any(isinstance(v, ast.List) and not v.elts for v, _ in bound):
            return None
        for value, node in bound:
            if method(node) == "append" and isinstance(value, (ast.BinOp, ast.IfExp)):
                added = self._added(target, value)
                if added is not None:
                    return added
        return None

    def bound_once(self, node):
        """What a name is bound to, where it is bound once; else the node."""
        if isinstance(node, ast.Name):
            bound = [v for v, _ in self.values_of(node.id, node)]
            return bound[0] if len(bound) == 1 else node
        return node

    def _is_alias_of(self, node, key):
        return isinstance(node, ast.Name) and self._loop_alias(node) == key

    def _loop_carried(self):
        """``_, sums = tf.while_loop(cond, body, [0, zeros])`` whose body
        returns ``[s + g for s, g in zip(sums, grads)]`` in the place of its
        parameter ``sums``: the loop's output sums those gradients."""
        found = []
        for call in (c for c in self.calls if method(c) == "while_loop"):
            body = ([a for a in call.args[1:2]] + [k.value for k in call.keywords
                                                  if k.arg == "body"] + [None])[0]
            function = branch_function(self, body, call) if body is not None else None
            assign = self.parents.get(call)
            if function is None or not isinstance(assign, ast.Assign) or len(assign.targets) != 1:
                continue
            target = assign.targets[0]
            outputs = target.elts if isinstance(target, ast.Tuple) else [target]
            rest_out = [o.value for o in outputs if type(o).__name__ == "Starred"]
            outputs = [o for o in outputs if type(o).__name__ != "Starred"]
            params = parameter_names(function)
            star = getattr(function.args.vararg, "arg", function.args.vararg)
            returns = [function.body] if isinstance(function, ast.Lambda) else [
                r.value for r in nodes_in(function) if isinstance(r, ast.Return) and r.value]
            for value in returns:
                items, rest = _spread(value)
                pairs = list(zip(params, items, outputs))
                if star and rest is not None and rest_out:  # (``body(i, *accs)``)
                    pairs.append((star, self.bound_once(rest), rest_out[0]))
                for param, item, output in pairs:
                    bound = self.bound_once(item)  # (``acc = [a + g ...]; return i + 1, acc``)
                    item = bound if isinstance(bound, _LIST_COMPREHENSION) else item
                    own = next((n for n in nodes_in(item)
                                if isinstance(n, ast.Name) and n.id == param), None)
                    added = self._added(own, item) if own is not None else None
                    key = self.key(output)
                    if added is not None and key is not None and not isinstance(added, NUMBER):
                        found.append(Accumulate(key, item, function, added))
        return found

    def _kept_for_sum(self, call, key, applies):
        """``self.grads_list.append(new_grads)``, unguarded in a method of
        its own (``update_grads_list``), a gradient by its name, that another
        method of the class applies as a sum over the list's elements."""
        if key[0] != "self" or "grad" not in (dotted_name(call.args[0]) or "").lower() \
                or self.locally_guarded(call):
            return False
        function = self.function_of(call)
        return any(key in a.keys and a.function is not function and _sum_of_list(a)
                   and self.class_of(a.function) is self.class_of(function) for a in applies)

    def _appended(self, applies):
        """``grads_list.append(grads)`` in a loop whose apply, in the same
        loop (or in a function called or run by ``strategy.run`` there),
        reads the list (``tf.reduce_sum(tf.stack(...))`` of it): the
        list keeps the micro-batches' gradients for the apply to sum. Not
        GPU towers' lists, applied once after their loop."""
        found = []
        for call in (c for c in self.calls if method(c) == "append" and len(c.args) == 1
                     and isinstance(c.func, ast.Attribute)):
            loop, key = self.loop_of(call), self.key(call.func.value)
            if loop is None and key is not None and self._kept_for_sum(call, key, applies):
                found.append(Accumulate(key, call, self.function_of(call), call.args[0]))
            if loop is None or key is None or not parameters.differentiated(self, call.args[0]):
                continue
            if any(key in a.keys and loop in [self.loop_of(n) for n in [a.node] + (
                    self.callers(a.function) + self.handed_to(a.function)
                    if a.function is not None else [])] for a in applies):
                found.append(Accumulate(key, call, self.function_of(call), call.args[0]))
        # (``buffer[i] -= grad * reward / N``: negated gradients summed, for a
        # policy gradient that maximizes; only where an apply reads them, not
        # a hand-written step ``w -= lr * g``)
        for node in (n for n in self.nodes if isinstance(n, ast.AugAssign)
                     and isinstance(n.op, ast.Sub)):
            key = self.key(node.target)
            if key is not None and any(key in a.keys for a in applies) \
                    and parameters.differentiated(self, node.value):
                found.append(Accumulate(key, node, self.function_of(node), node.value))
        return found


def _sum_of_list(apply):
    """The apply's gradients are a sum over a list's elements: ``[sum(g)
    for g in zip(*self.grads_list)]``, ``tf.add_n``, ``reduce_sum``/
    ``reduce_mean`` of a stack."""
    return any(method(e) in ("sum", "add_n", "reduce_sum", "reduce_mean", "mean")
               for c in apply.chain for e in nodes_in(c) if isinstance(e, ast.Call))


def _factors(value):
    """The factors of a product (or the value itself): ``float(x) * s``."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Mult, ast.Div)):
        return _factors(value.left) + _factors(value.right)
    return [value]


def _handed(call):
    """What a helper's add is handed: its first argument, or its
    ``gradients=`` (``grads=``)."""
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg in ("gradients", "grads")), None)


def _adds(function):
    """``lambda a, g: a + g``, ``tf.add`` or ``operator.add``: a function
    that adds its two arguments."""
    if isinstance(function, ast.Lambda):
        body, params = function.body, parameter_names(function)
        return isinstance(body, ast.BinOp) and isinstance(body.op, ast.Add) and len(params) == 2 \
            and sorted(getattr(n, "id", None) for n in (body.left, body.right)) == sorted(params)
    return (dotted_name(function) or "").rsplit(".", 1)[-1] == "add"


def _decayed(node):
    """``gamma * lambda_ * acc``: the old value scaled by a decay (an
    eligibility trace or a moment), which no sum of micro-batches is."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and any(
        word in (dotted_name(n) or "").split(".")[-1].lower() for n in nodes_in(node)
        for word in ("gamma", "lambda", "decay", "beta", "momentum", "rho", "discount"))


def _accumulator_named(name):
    """``self.accumulator``, ``accumulate_gradients``: a helper that adds
    what it is handed. Not a getter, a count or an apply
    (``_get_accumulation_steps``, ``accum_count``, ``_apply_accumulated``),
    unless it names gradients."""
    name = (name or "").split(".")[-1].lower()
    counts = name.lstrip("_").startswith("get") or any(
        word in name for word in ("step", "count", "num", "size", "freq", "apply", "reset"))
    return "accum" in name and ("grad" in name or not counts)


def _spread(value):
    """``(items, rest)`` of what a loop body returns: ``[i + 1, loss] +
    sums`` is ``([i + 1, loss], sums)``; a tuple or list is its items."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) \
            and isinstance(value.left, (ast.List, ast.Tuple)):
        return list(value.left.elts), value.right
    return (list(value.elts) if isinstance(value, (ast.Tuple, ast.List)) else [value]), None
