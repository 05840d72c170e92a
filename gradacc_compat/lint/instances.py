"""Which method of the file ``helper.method(...)`` runs when ``helper`` is
no ``self``: a name the file binds to an instance of one of its own
classes (``ga_model = GradientAccumulationModel(model, opt, ...)``, then
``ga_model.train_step(x, y)`` in an epoch's loop). Lets ``epochs`` follow a
hand-written accumulating class the way it follows a function.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name
from gradacc_compat.lint.parameters import run_by

__all__ = ["called", "instance_method"]


def called(index, call):
    """The function of the file ``call`` runs: ``f(...)``, a method of an
    instance of a class of the file, or ``fn`` in ``strategy.run(fn)``
    (``experimental_run_v2``)."""
    callee = index.callee(call) or instance_method(index, call)
    if callee is None and call.args and isinstance(call.args[0], ast.Name):
        named = run_by(index, call)
        callee = named[0] if len(named) == 1 else None
    return callee


def instance_method(index, call):
    """The method ``call`` runs on an instance of a class of the file that
    its receiver (a plain name) is bound to anywhere in the file, when
    that is one class; else None."""
    if not (isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)):
        return None
    made = index.memo("instances", lambda: _instances(index))
    classes = made.get(call.func.value.id, [])
    methods = [m for m in (cls.get(call.func.attr) for cls in classes) if m is not None]
    return methods[0] if len(classes) == 1 and methods else None


def _instances(index):
    classes = dict((c.name, c) for c in index.nodes if isinstance(c, ast.ClassDef))
    found = {}
    for node in index.assigns:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call):
            cls = classes.get((dotted_name(node.value.func) or "").split(".")[-1])
            if cls is not None:
                methods = dict((f.name, f) for f in cls.body if isinstance(f, ast.FunctionDef))
                known = found.setdefault(node.targets[0].id, [])
                if all(m != methods for m in known):
                    known.append(methods)
    return found
