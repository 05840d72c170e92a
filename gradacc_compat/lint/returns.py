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
    """``(expression, node)``: what the function called in ``assign``
    (``loss, sums = self.step(x, sums)``, a function of this file)
    returns in ``name``'s place, or None."""
    call = assign.value
    if not isinstance(call, ast.Call) or len(assign.targets) != 1:
        return None
    callee = index.callee(call)
    target = assign.targets[0]
    position = None
    if isinstance(target, ast.Tuple):
        names = [getattr(t, "id", None) for t in target.elts]
        position = names.index(name) if name in names else None
        if position is None:
            return None
    for hop in range(3):  # (``return other_helper(...)``: what that one returns)
        for node in index.statements_of(callee) if callee is not None else ():
            if isinstance(node, ast.Return) and node.value is not None:
                value = node.value
                if isinstance(value, ast.Call) and index.callee(value) is not None \
                        and hop < 2:
                    callee = index.callee(value)
                    break
                if position is not None:
                    if not isinstance(value, ast.Tuple) or position >= len(value.elts):
                        continue
                    value = value.elts[position]
                    if isinstance(value, ast.Call) and index.callee(value) is not None \
                            and hop < 2:  # (``return loss, reduce_grads(grads)``)
                        callee, position = index.callee(value), None
                        break
                return (value, node)
        else:
            return None
    return None
