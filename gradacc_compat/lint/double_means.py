"""``lint``'s GAC108 for a mean of the micro-batches' gradients divided by
N once more: ``1 / batch_size * np.mean(gradients, axis=0)`` (or
``tf.reduce_mean(tf.stack(grads), axis=0) / N``) of a list a loop fills,
one entry per micro-batch. The mean over the list already divides its
sum by N. And a running mean (``acc + (g - acc) / count``) of gradients
already divided by N.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, method
from gradacc_compat.lint.exprs import divides_by_n, number
from gradacc_compat.lint.parameters import differentiated

__all__ = ["running_means", "scaled_means"]


def scaled_means(index, report):
    for apply in index.applies:
        for expr in apply.chain:
            mean = _scaled_mean(expr)
            if mean is not None and _appended_in_loop(index, mean) \
                    and differentiated(index, mean.args[0]):
                report(apply.node, "GAC108", dotted_name(mean.args[0]) or "the mean",
                       "its mean over the micro-batches is divided again")
                break


def _scaled_mean(expr):
    """The mean over axis 0 in ``expr / N`` or ``1 / N * expr``, or None."""
    if not isinstance(expr, ast.BinOp):
        return None
    if isinstance(expr.op, ast.Div) and number(expr.right) != 1:
        sides = [expr.left]
    elif isinstance(expr.op, ast.Mult):
        sides = [b for a, b in ((expr.left, expr.right), (expr.right, expr.left))
                 if isinstance(a, ast.BinOp) and isinstance(a.op, ast.Div)
                 and number(a.left) == 1]
    else:
        return None
    return next((s for s in sides if method(s) in ("mean", "reduce_mean") and s.args
                 and _over_micro_batches(s)), None)


def _appended_in_loop(index, mean):
    """The mean is of a list (or a stack of one) that a loop appends to:
    one entry per micro-batch, not one batch's per-example gradients."""
    listed = mean.args[0]
    if method(listed) == "stack" and listed.args:
        listed = listed.args[0]
    if not isinstance(listed, ast.Name):
        return False
    binder = index.binder(listed.id, mean)
    return any(index.loop_of(call) is not None
               for call in index.appends(binder).get(listed.id, ()))


def _over_micro_batches(call):
    """``mean(x, axis=0)`` (or ``mean(x, 0)``) of a list, or of a stack."""
    axis = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "axis"), None)
    return number(axis) == 0 if axis is not None else False


def running_means(index, report):
    """GAC108: ``acc + (g - acc) / count`` (a running mean) of gradients
    already divided by N."""
    for node in index.nodes:
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)
                and isinstance(node.right, ast.BinOp) and isinstance(node.right.op, ast.Div)
                and isinstance(node.right.left, ast.BinOp)
                and isinstance(node.right.left.op, ast.Sub)):
            continue
        mean = dotted_name(node.left)
        if not mean or dotted_name(node.right.left.right) != mean:
            continue
        _, chain = index.sources(node.right.left.left, node)
        if any(divides_by_n(e) for e in chain):
            report(node, "GAC108", mean, "the gradients it averages were already divided")
