"""Which calls of a file apply gradients, for ``flow``'s applies: the
optimizer's own methods (``apply_gradients``, an optimizer's
``_resource_apply_dense``), a name bound to one (``apply_fn =
optimizer.apply_gradients``), and a method of another file named for
applying gradients and handed the sums (``agent.applyGrad(grad_buffer)``).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import method

__all__ = ["is_apply"]

_APPLIES = ("apply_gradients", "_apply_gradients", "_resource_apply_dense", "_apply_dense")
_FOREIGN = ("applygrad", "applygrads", "applygradient")


def is_apply(index, call):
    return method(call) in _APPLIES or _bound_apply(index, call) or _foreign_apply(index, call)


def _bound_apply(index, call):
    """``apply_fn(...)`` where ``apply_fn = optimizer.apply_gradients``
    (on some path)."""
    return isinstance(call.func, ast.Name) and any(
        isinstance(v, ast.Attribute) and v.attr in _APPLIES
        for v, _ in index.values_of(call.func.id, call))


def _foreign_apply(index, call):
    """``agent.applyGrad(grad_buffer)``: a method no function of this file
    defines, named for applying gradients, handed one name; or one named
    for the optimizer's own (``self._orig_apply_gradients(zip(...))``, the
    original that a patch of ``apply_gradients`` keeps)."""
    word = call.func.attr.replace("_", "").lower() if isinstance(call.func, ast.Attribute) \
        else ""
    return (word in _FOREIGN and len(call.args) == 1 and isinstance(call.args[0], ast.Name)
            or word.endswith("applygradients") and bool(call.args)) \
        and not any(getattr(f, "name", None) == call.func.attr for f in index.functions)
