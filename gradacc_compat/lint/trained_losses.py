"""``lint``'s GAC102 for a loss that a Keras training call returns: ``with
tf.GradientTape() as tape: loss = model.train_on_batch(x, y)``, then
``tape.gradient(loss, ...)`` added to the sums. ``train_on_batch`` has
already stepped the model's optimizer on this micro-batch, besides the
apply of the sums.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.accumulates import label
from gradacc_compat.lint.ast_helpers import dotted_name, method
from gradacc_compat.lint.exprs import GRADIENT_CALLS

__all__ = ["trained_on_batch"]

_TRAINS = ("train_on_batch", "fit")


def trained_on_batch(index, report, add, reported):
    if not index.memo("trains", lambda: any(method(c) in _TRAINS for c in index.calls)):
        return
    for grad in index.sources(add.value, add.value)[1]:
        if not (isinstance(grad, ast.Call) and method(grad) in GRADIENT_CALLS and grad.args):
            continue
        for expr in index.sources(grad.args[0], grad)[1]:
            if isinstance(expr, ast.Call) and method(expr) in _TRAINS \
                    and ("GAC102", expr.lineno) not in reported:
                reported.add(("GAC102", expr.lineno))
                report(expr, "GAC102", label(add), ": `%s` steps the optimizer on the "
                       "micro-batch whose loss it returns for the sums"
                       % (dotted_name(expr.func) or method(expr)))
