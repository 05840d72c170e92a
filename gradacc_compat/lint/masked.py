"""``lint``'s GAC102 for sums masked instead of skipped: a gradient
transformer (or ``apply_gradients`` override) that hands the optimizer
zeros on the micro-steps that should not apply -- ``tf.cond(apply_now,
read_sums, lambda: tf.zeros_like(g))`` or ``sums * tf.cast(step % N == 0)``
-- so the optimizer's update still runs on every micro-batch, and a zero
gradient still moves the weights of Adam, momentum or weight decay.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.accumulates import label
from gradacc_compat.lint.ast_helpers import (FUNCTIONS, method, nodes_in, parameter_names,
                                             update_hooks)
from gradacc_compat.lint.branches import branch_function, cond_branches
from gradacc_compat.lint.divisions import divided_at_add
from gradacc_compat.lint.losses import scaled
from gradacc_compat.lint.exprs import is_division, modulo_tested, number, reads_modulo

__all__ = ["gated_hooks", "masked_sums", "zero_updates"]


def masked_sums(index, report):
    # (one finding per function: the dense path's, where a sparse one
    # beside it, ``if isinstance(grad, tf.IndexedSlices)``, is the same bug)
    masked = [(c, ms) for c, ms in ((c, _masking(index, c)) for c in index.calls
                                    if method(c) in ("cond", "where", "switch")
                                    and not gated_hooks(index, c)
                                    and not _applied_in_branch(index, c)) if ms]
    for call, (sums, branch) in masked:
        rivals = [c for c, _ in masked if index.function_of(c) is index.function_of(call)]
        dense = [c for c in rivals if not _sparse_path(index, c)] or rivals
        if call is dense[0]:
            report(call, "GAC102", sorted(k[-1] for k in sums)[0], "")
            if branch is not None and not _divided_on_the_way_in(index, sums):
                _undivided(index, report, call, branch)  # (a where's: decided at the apply)
    for call in index.calls:
        if method(call) == "cast" and call.args and modulo_tested(call.args[0]) is not None:
            mask = index.parents.get(call)
            if isinstance(mask, ast.Assign) and len(mask.targets) == 1 \
                    and isinstance(mask.targets[0], ast.Name):
                for product in _products(index, mask.targets[0].id, mask):
                    report(product, "GAC102", _name(index, product), "")
                    _undivided(index, report, product, None)


def _masking(index, call):
    """``(keys, branch)`` of a ``tf.cond`` that hands zeros on one branch and
    sums on the other, or of a ``tf.where(step % N == 0, sums, zeros)``
    (``K.switch``; branch None), else None."""
    if method(call) != "cond":
        if len(call.args) != 3 or not reads_modulo(call.args[0]):
            return None  # (an element-wise pick, or a reset: no cycle's test)
        zeros = [p for p in call.args[1:] if method(p) in ("zeros_like", "zeros")]
        sums = [index.sources(p, p)[0] & index.accumulators
                for p in call.args[1:] if all(p is not z for z in zeros)]
        return (sums[0], None) if zeros and sums and sums[0] else None
    branches = [b for b in cond_branches(call) if b is not None]
    zeros = [b for b in branches if _zeros(index, b, call)]
    sums = [(_sums_read(index, b, call), b) for b in branches if b not in zeros]
    sums = [(keys, b) for keys, b in sums if keys]
    return sums[0] if zeros and sums else None


def _applied_in_branch(index, node):
    """The function around ``node`` applies only in a branch of a
    ``tf.cond`` of its own (``tf.cond(last, do_apply, no_apply)``): the
    zeros it hands on the other steps reach no optimizer."""
    function = index.function_of(node)
    conds = [n for n in nodes_in(function) if method(n) == "cond" and n is not node] \
        if function is not None else []
    for cond in conds:
        for branch in cond_branches(cond):
            run = branch_function(index, branch, cond)
            if run is not None and run is not function and any(
                    "apply" in (method(c) or "") for c in nodes_in(run)):
                return True
    return False


def zero_updates(index, report):
    """GAC102 for an optimizer wrapper's own update hook that decides by
    ``tf.cond`` and, on the steps that should skip, still runs the inner
    optimizer's update with a zero gradient (``inner._resource_apply_dense(
    grad * 0.0, var)``): its moments and decay still move the weights."""
    for cls in (c for c in index.nodes if isinstance(c, ast.ClassDef)):
        for hook in update_hooks(cls):
            for call in (n for n in nodes_in(hook) if method(n) == "cond"):
                if any(_updates_with_zeros(index, b, call) for b in cond_branches(call)):
                    sums = sorted(label(a) for a in index.accumulates if a.function is hook)
                    report(call, "GAC102", sums[0] if sums else "the sums", ": the branch that "
                           "skips still runs the inner optimizer's update, with a zero gradient")
                    break


def _updates_with_zeros(index, branch, call):
    """The branch runs an update hook with a zero gradient: in itself, or
    in the def it calls (``lambda: _skip(acc, grad, var)``)."""
    function = branch_function(index, branch, call)
    for node in (n for n in nodes_in(function) if isinstance(n, ast.Call)) if function else ():
        if _zero_update(node, {}):
            return True
        callee = _local_def(index, node, call)
        if callee is not None and callee is not function:
            passed = dict(zip(parameter_names(callee), node.args))
            if any(_zero_update(n, passed) for n in nodes_in(callee)):
                return True
    return False


def _zero_update(node, passed):
    """``inner._resource_apply_dense(grad * 0.0, var)``; a parameter's name
    stands for what ``passed`` says its call hands it."""
    if not ((method(node) or "").lstrip("_").startswith(("resource_apply", "apply_dense"))
            and node.args):
        return False
    first = node.args[0]
    return _zero_product(passed.get(getattr(first, "id", None), first))


def _local_def(index, node, call):
    """The def ``node`` calls: one of that name nested in the hook around
    ``call`` (a file may nest a ``_skip`` in each of its hooks), else the
    file's."""
    name = getattr(node.func, "id", None)
    local = [f for f in nodes_in(index.function_of(call)) if isinstance(f, ast.FunctionDef)
             and f.name == name] if name else []
    return local[0] if local else index.callee(node)


def _zero_product(node):
    """``grad * 0.0`` or ``tf.zeros_like(grad)``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return any(number(side) == 0 for side in (node.left, node.right))
    return method(node) in ("zeros_like", "zeros")


def gated_hooks(index, node):
    """The class around ``node`` updates in a ``_resource_apply_dense`` (or
    ``_apply_dense``) of its own that decides, by ``tf.cond``, whether to
    update at all: the zeros it is handed on other steps move nothing."""
    return any(method(n) == "cond" for f in update_hooks(index.class_of(node))
               for n in nodes_in(f))


def _sparse_path(index, node):
    """In the body of ``if isinstance(grad, tf.IndexedSlices):``."""
    return any(isinstance(up, ast.If) and "IndexedSlices" in ast.dump(up.test)
               and any(node is n for s in up.body for n in nodes_in(s))
               for up in index.ancestors(node))


def _divided_on_the_way_in(index, sums):
    """The gradients added to ``sums`` are of a loss divided by N, or are
    divided as they are added."""
    return any(a.key in sums and (divided_at_add(index, a) or scaled(index, a))
               for a in index.accumulates)


def _undivided(index, report, node, branch):
    """GAC101 as well when what is handed over on the applying step is the
    sum itself: nothing on its way divides it."""
    if branch is not None:
        function = branch_function(index, branch, node)
        if function is None:
            return
        body = [function.body] if isinstance(function, ast.Lambda) else [function]
    else:
        while isinstance(index.parents.get(node), ast.expr):
            node = index.parents[node]  # ((sums * mask) / n: the whole expression)
        body = [node]
    if not any(isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Div)
               for b in body for n in nodes_in(b)) \
            and not any(is_division(e) for b in body for n in nodes_in(b)
                        if isinstance(n, ast.expr) for e in index.sources(n, n)[1]):
        report(node, "GAC101", _name(index, node))


def _zeros(index, branch, call):
    """``lambda: tf.zeros_like(g)`` (or a tuple starting with it), or a def
    that returns only zeros (``return [tf.zeros_like(v) for v in vars]``)."""
    returns = _returned_values(index, branch, call)
    for body in returns:
        if isinstance(body, ast.Tuple) and body.elts:
            body = body.elts[0]
        if isinstance(body, ast.ListComp):
            body = body.elt
        if not (isinstance(body, ast.Call) and method(body) in ("zeros_like", "zeros")):
            return False
    return bool(returns)


def _sums_read(index, branch, call):
    """The accumulators a branch returns what it reads of, those the cond's
    function or class adds to (not a count another function of a library
    module adds to, reached through the helpers it calls)."""
    scope = index.step_scope(call)
    owner = index.class_of(scope) if scope is not None else None
    near = set(a.key for a in index.accumulates if index.step_scope(a.node) is scope
               or owner is not None and index.class_of(a.function or a.node) is owner)
    return set(k for value in _returned_values(index, branch, call) if value is not None
               for k in index.sources(value, value)[0] if k in near)


def _returned_values(index, branch, call):
    """What the def or lambda of a ``tf.cond`` branch returns (``None`` for
    a bare ``return``); ``[]`` when lint cannot find it."""
    function = branch_function(index, branch, call)
    if function is None:
        return []
    return [function.body] if isinstance(function, ast.Lambda) else [
        n.value for n in index.statements_of(function) if isinstance(n, ast.Return)]


def _name(index, node):
    keys = index.sources(node, node)[0] & index.accumulators
    return sorted(k[-1] for k in keys)[0] if keys else "the sums"


def _products(index, mask, assign):
    """``sums[v] * mask`` of the accumulators, in the mask's function."""
    for node in index.statements_of(index.function_of(assign)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) \
                and any(isinstance(side, ast.Name) and side.id == mask
                        for side in (node.left, node.right)) \
                and index.keys_in(node) & index.accumulators \
                and not isinstance(node, FUNCTIONS):
            yield node
