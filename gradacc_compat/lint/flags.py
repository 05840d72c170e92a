"""A function's code behind a flag its call switches off: ``if
<parameter>:`` in the function, and the call passes that parameter
``False``, ``None`` or ``0`` (or leaves such a default), or ``mode ==
"train"`` where the call passes another mode. What runs there does not run
for that call.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import parameter_names, string_of
from gradacc_compat.lint.exprs import literal

__all__ = ["BARE_CALL", "switched_off"]

#: A call with no arguments (a function ``tf.cond`` calls as a branch).
BARE_CALL = ast.Call(func=None, args=[], keywords=[])


def switched_off(ancestors, node, function, call):
    """``node`` (in ``function``) sits in the body of an ``if`` that
    ``call`` switches off. ``ancestors(node)`` lists its parents upward."""
    if isinstance(function, ast.Lambda) or getattr(function, "args", None) is None:
        return False
    params = parameter_names(function)
    params = params[1:] if params[:1] == ["self"] else params
    defaults = function.args.defaults
    passed = dict(zip(params[len(params) - len(defaults):], defaults)) if defaults else {}
    passed.update(zip(params, call.args))
    passed.update((k.arg, k.value) for k in call.keywords if k.arg)
    child = node
    for up in ancestors(node):
        if up is function:
            break
        if isinstance(up, ast.If) and any(child is s for s in up.body) and (
                getattr(up.test, "id", None) in passed and _false(passed[up.test.id])
                or _other_mode(up.test, passed)):
            return True
        child = up
    return False


def _other_mode(test, passed):
    """``mode == "train"`` where the call passes ``mode="eval"``."""
    return isinstance(test, ast.Compare) and len(test.ops) == 1 \
        and isinstance(test.ops[0], ast.Eq) and getattr(test.left, "id", None) in passed \
        and string_of(passed[test.left.id]) not in (None, string_of(test.comparators[0]))


def _false(node):
    """The literal ``False``, ``None`` or ``0``."""
    return literal(node) in (False, None, 0)
