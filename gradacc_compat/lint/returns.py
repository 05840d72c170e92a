"""What a call of a function of the file hands back in a name's place:
``loss, sums = self.step(x, sums)`` binds ``sums`` to what ``step``
returns second (through up to two helpers that return another's call, or
hand one back in its place).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

__all__ = ["returned"]


def returned(index, name, assign):
    """``[(expression, node)]``: what the function called in ``assign``
    (``loss, sums = self.step(x, sums)``, a function of this file)
    returns in ``name``'s place, on each of its ``return`` statements."""
    call = assign.value
    if not isinstance(call, ast.Call) or len(assign.targets) != 1:
        return []
    target = assign.targets[0]
    position = None
    if isinstance(target, ast.Tuple):
        names = [getattr(t, "id", None) for t in target.elts]
        if name not in names:
            return []
        position = names.index(name)
    return _returns(index, index.callee(call), position, 2)


def _returns(index, callee, position, hops):
    """What ``callee`` returns (its ``position``-th element), through up to
    ``hops`` helpers whose call it returns (``return other(...)``,
    ``return loss, reduce_grads(grads)``)."""
    found = []
    for node in index.statements_of(callee) if callee is not None else ():
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        value, at = node.value, position
        if at is not None and not _callee(index, value, hops):
            if not isinstance(value, ast.Tuple) or at >= len(value.elts):
                continue
            value, at = value.elts[at], None
        helper = _callee(index, value, hops)
        if helper is not None and helper is not callee:
            found.extend(_returns(index, helper, at, hops - 1))
        elif at is None:
            found.append((value, node))
    return found


def _callee(index, value, hops):
    return index.callee(value) if hops > 0 and isinstance(value, ast.Call) else None
