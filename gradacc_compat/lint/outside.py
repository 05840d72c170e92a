"""The calls of a method from outside its class: ``agent.apply_gradients()``
in a loop over agents the file makes by a factory it does not define
(``agents = [self.agent_class(cfg) ...]``), so no receiver is known to be
an instance of the class. Where one class of the file alone defines a
method of that name, and the call fits its parameters, the call runs it:
``guards`` and ``schedule`` read the conditions there (``if episode % N ==
0: agent.apply_gradients()``).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import parameter_names

__all__ = ["outside_calls"]


def outside_calls(index, method_def):
    """The calls ``x.name(...)`` (``x`` a plain name, not ``self``) of the
    method ``method_def``, when no other class of the file has a method
    of its name and the call's arguments fit its parameters."""
    if not isinstance(index.parents.get(method_def), ast.ClassDef):
        return []
    return index.memo(("outside calls", id(method_def)), lambda: _calls(index, method_def))


def _calls(index, method_def):
    name = method_def.name
    methods = index.memo("method names", lambda: [
        f.name for c in index.nodes if isinstance(c, ast.ClassDef)
        for f in c.body if isinstance(f, ast.FunctionDef)])
    if methods.count(name) != 1:
        return []
    params = parameter_names(method_def)[1:]
    required = len(params) - len(method_def.args.defaults)
    return [c for c in index.calls if isinstance(c.func, ast.Attribute) and c.func.attr == name
            and isinstance(c.func.value, ast.Name) and c.func.value.id != "self"
            and required <= len(c.args) + len(c.keywords) <= len(params)]
