"""Which functions of a file run traced, where Python state moves once,
at tracing: a ``@tf.function`` (any spelling), a Keras model's
``train_step`` (``fit`` traces it), an accumulating optimizer's
``apply_gradients``, and the methods these call as ``self.name(...)``.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import FUNCTIONS, dotted_name, method, nodes_in, walk

__all__ = ["traced", "traced_functions"]


def traced(function):
    """Whether ``function`` runs traced: ``@tf.function`` (any spelling),
    or a ``train_step`` method (Keras ``fit`` traces it)."""
    if isinstance(function, ast.Lambda):
        return False
    for dec in function.decorator_list:
        name = dotted_name(dec.func if isinstance(dec, ast.Call) else dec) or ""
        if name.split(".")[-1] == "function":
            return True
    return function.name == "train_step"


def traced_functions(nodes):
    """The traced functions (see ``traced``) and the methods they call as
    ``self.name(...)``, in their class (a ``train_step`` that hands the
    batch to ``self.acc_train_step``), to a fixed point."""
    plain = set(id(f) for cls in nodes if isinstance(cls, ast.ClassDef) and all(
        dotted_name(b) == "object" for b in cls.bases) for f in cls.body)
    found = set(id(f) for f in nodes if isinstance(f, FUNCTIONS) and traced(f)
                 and not (id(f) in plain and f.name == "train_step" and not f.decorator_list))
    # (an optimizer's ``apply_gradients`` runs once per trace under ``fit``,
    # and once in all in a TF1 graph: its Python state does not move per step)
    found |= set(id(f) for cls in nodes if isinstance(cls, ast.ClassDef) and any(
        (dotted_name(b) or "").endswith("Optimizer") for b in cls.bases) and _accumulating(cls)
        for f in cls.body if isinstance(f, FUNCTIONS[:-1]) and f.name == "apply_gradients")
    # (``fit`` traces the ``train_step`` of a Keras model; one of a class
    # of its own, ``class Trainer:`` or ``(object)``, runs as it is called)
    for cls in nodes:
        if not isinstance(cls, ast.ClassDef):
            continue
        methods = dict((f.name, f) for f in cls.body if isinstance(f, FUNCTIONS[:-1]))
        grown = True
        while grown:
            grown = False
            for f in list(methods.values()):
                if id(f) not in found:
                    continue
                for node in walk(f, FUNCTIONS):
                    # (a call ``self.name(...)``, or ``self.name`` handed to
                    # ``tf.cond``: both run in the trace)
                    name = dotted_name(node) if isinstance(node, ast.Attribute) else None
                    callee = methods.get(name[5:]) if name and name.startswith("self.") else None
                    if callee is not None and id(callee) not in found:
                        found.add(id(callee))
                        grown = True
    return found


def _accumulating(cls):
    """``cls`` adds to sums named for accumulation (``self.accum[i] += g``)."""
    targets = [n.target if isinstance(n, ast.AugAssign) else n.func.value for n in nodes_in(cls)
               if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add)
               or method(n) == "assign_add" and isinstance(n.func, ast.Attribute)]
    return any("accum" in (dotted_name(x) or "").lower() for t in targets for x in nodes_in(t))
