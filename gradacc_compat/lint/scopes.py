"""Where a node of a module runs: the functions, lambdas, classes and
loops around it, the ``tf.cond`` branches it sits in, the calls of its
function in the file, and the conditions it runs under.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import (FUNCTIONS, children, dotted_name, fetched_in_place,
                                             method, nodes_in, parameter_names, string_of)
from gradacc_compat.lint.exprs import CONDS
from gradacc_compat.lint.flags import BARE_CALL, switched_off
from gradacc_compat.lint.outside import outside_calls

__all__ = ["Scopes", "LOOPS", "RUNS"]

#: Calls that run a function handed to them, once per replica.
RUNS = ("run", "experimental_run_v2", "call_for_each_replica")
LOOPS = (ast.For, ast.While) + tuple(t for t in (getattr(ast, "AsyncFor", None),) if t)
_ANNOTATED = tuple(t for t in (getattr(ast, "AnnAssign", None),) if t)  # (not in Python 2)


class Scopes(object):
    """A parsed module and its parent links."""

    def __init__(self, tree):
        self.tree = tree
        self.parents = {}
        self.calls, self.assigns = [], []  # every Call; every Assign and AugAssign
        self.functions = []  # every def and lambda
        self.nodes = list(nodes_in(tree))  # every node, in ``ast.walk``'s order
        for node in self.nodes:
            if isinstance(node, FUNCTIONS):
                self.functions.append(node)
            if isinstance(node, ast.Call):
                self.calls.append(node)
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                self.assigns.append(node)
            for child in children(node):
                self.parents[child] = node
        self._memo = {}

    def memo(self, key, compute):
        """``compute()`` once per ``key`` for this module (the checks ask the
        same questions of every accumulator and apply)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def _bound_in(self, function):
        """Names bound in ``function`` (the module when None)."""
        return self.memo(("bound in", id(function)), lambda: self._find_bound(function))

    def _find_bound(self, function):
        names = set()
        if function is not None:
            args = function.args
            for arg in list(args.args) + list(getattr(args, "kwonlyargs", [])):
                names.add(getattr(arg, "arg", None) or getattr(arg, "id", None))
            for extra in (args.vararg, args.kwarg):
                if extra is not None:
                    names.add(getattr(extra, "arg", extra))
        for node in self.statements_of(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Param)):
                names.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
        return names

    def binder(self, name, node):
        """The function whose scope binds ``name`` as seen at ``node``."""
        function = self.function_of(node)
        while function is not None:
            if name in self._bound_in(function):
                return function
            function = self.function_of(function)
        return None

    def ancestors(self, node):
        node = self.parents.get(node)
        while node is not None:
            yield node
            node = self.parents.get(node)

    def function_of(self, node):
        """The innermost function (def or lambda) around ``node``, or None."""
        for up in self.ancestors(node):
            if isinstance(up, FUNCTIONS):
                return up
        return None

    def class_of(self, function):
        for up in self.ancestors(function):
            if isinstance(up, ast.ClassDef):
                return up
            if isinstance(up, FUNCTIONS):
                continue
        return None

    def statement_of(self, node):
        """The statement ``node`` is part of (itself when it is one), or None."""
        while node is not None and not isinstance(node, ast.stmt):
            node = self.parents.get(node)
        return node

    def statements_of(self, function):
        """Every node of ``function`` (the module when None; or of a loop),
        not those of functions nested in it."""
        return self.memo(("statements", id(function)), lambda: self._statements(function))

    def _statements(self, function):
        root = function if function is not None else self.tree
        found = []
        todo = list(children(root))
        while todo:
            node = todo.pop()
            found.append(node)
            if not isinstance(node, FUNCTIONS):
                todo.extend(children(node))
        return found

    def loop_of(self, node):
        """The innermost loop around ``node`` inside its own function."""
        for up in self.ancestors(node):
            if isinstance(up, FUNCTIONS):
                return None
            if isinstance(up, LOOPS):
                return up
        return None

    # ------------------------------------------------------------- guards
    def branch_call(self, function):
        """The ``tf.cond``-like call that takes ``function`` as a branch,
        directly or by name, or None."""
        if isinstance(function, ast.Lambda):
            parent = self.parents.get(function)
            if isinstance(parent, ast.keyword):
                parent = self.parents.get(parent)
            if isinstance(parent, ast.Call) and method(parent) in CONDS:
                return parent
            return None
        return self.memo(("branch", id(function)), lambda: self._branch_by_name(function))

    def _branch_by_name(self, function):
        """The first such call that names ``function``; where several do
        (two classes' ``_apply``), the one in the def or class that holds
        ``function``."""
        name = getattr(function, "name", None)
        named = [node for node in self.calls if method(node) in CONDS and any(
            (dotted_name(arg) or "").split(".")[-1] == name
            for arg in list(node.args[1:]) + [k.value for k in node.keywords])]
        owner = self.parents.get(function)
        near = [node for node in named if any(up is owner for up in self.ancestors(node))]
        return (near or named or [None])[0]

    def callers(self, function):
        """Calls of ``function`` in this file: ``self.name(...)`` in its
        class for a method, ``name(...)`` for a function."""
        return self.memo(("callers", id(function)), lambda: self._callers(function))

    def _callers(self, function):
        name = getattr(function, "name", None)
        if not name:
            return []
        owner = self.parents.get(function)
        if not isinstance(owner, ast.ClassDef):
            return list(self._calls_named().get(name, ()))
        names = [name] + [a for (o, a), m in self._aliases().items() if o is owner and m == name]
        return [n for a in names for n in self._calls_named().get("self." + a, ())
                if any(up is owner for up in self.ancestors(n))]

    def _calls_named(self):
        """``{dotted name called: [calls]}`` for the module."""
        def index():
            found = {}
            for call in self.calls:
                found.setdefault(dotted_name(call.func), []).append(call)
            return found
        return self.memo("calls named", index)

    def assignments(self, binder):
        """``{name: [(value, node)]}`` for the assignments and for loops of
        ``binder``'s own scope (the module when None)."""
        return self.memo(("assignments", id(binder)), lambda: self._assignments(binder))

    def _assignments(self, binder):
        found = {}
        for node in self.statements_of(binder):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    own = fetched_in_place(target, node.value)
                    # (``model.backbone = b`` sets an attribute; ``model`` stays bound)
                    for name in set(n.id for n in nodes_in(target) if isinstance(n, ast.Name)
                                    and not isinstance(target, ast.Attribute)):
                        found.setdefault(name, []).append((own.get(name, node.value), node))
            elif isinstance(node, ast.For):
                for name in set(n.id for n in nodes_in(node.target) if isinstance(n, ast.Name)):
                    found.setdefault(name, []).append((node.iter, node))
            elif isinstance(node, _ANNOTATED) and isinstance(node.target, ast.Name) \
                    and node.value is not None:  # (``merged: list = []``)
                found.setdefault(node.target.id, []).append((node.value, node))
        return found

    def appends(self, binder):
        """``{name: [call]}``: ``name.append(x)``, ``.extend(x)``,
        ``.insert(i, x)`` in ``binder``'s own scope (and ``"*x"``: those
        that take the name ``x``) (a list filled pair by
        pair, ``pairs.append((acc, v))``, then applied)."""
        return self.memo(("appends", id(binder)), lambda: self._appends(binder))

    def _appends(self, binder):
        found = {}
        for node in self.statements_of(binder):
            if isinstance(node, ast.Call) and method(node) in ("append", "extend", "insert") \
                    and node.args and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name):
                found.setdefault(node.func.value.id, []).append(node)
                if isinstance(node.args[-1], ast.Name):  # "*x": the lists x goes into
                    found.setdefault("*" + node.args[-1].id, []).append(node)
        return found

    def called(self, node):
        """The name a call calls; for a parameter, its default's
        (``accum_fn(acc, g)`` with ``accum_fn=tf.assign_add``)."""
        name = method(node)
        function = self.function_of(node)
        if isinstance(node.func, ast.Name) and function is not None \
                and not isinstance(function, ast.Lambda):
            args = function.args
            params = parameter_names(function)
            defaults = dict(zip(params[len(params) - len(args.defaults):], args.defaults))
            if name in defaults and dotted_name(defaults[name]):
                return dotted_name(defaults[name]).split(".")[-1]
        return name

    def callee(self, call):
        """The function of this file ``call`` calls (``f(...)``, ``self.f(...)``)."""
        name = dotted_name(call.func) or ""
        defs = self.memo("defs named", lambda: dict(
            ((self.parents.get(f) if isinstance(self.parents.get(f), ast.ClassDef) else None,
              f.name), f) for f in reversed(self.functions) if not isinstance(f, ast.Lambda)))
        if name.startswith("self."):
            owner = self.class_of(self.function_of(call) or call)
            name = self._aliases().get((owner, name[5:]), name[5:])
            return defs.get((owner, name)) if owner is not None else None
        return defs.get((None, name))

    def _aliases(self):
        """``{(class, alias): method}``: ``self.fast_step = tf.function(self.step)``
        (or any call handed ``self.step`` first; or ``self.step`` itself)."""
        def find():
            found = {}
            for node in self.assigns:
                value = node.value.args[0] if isinstance(node.value, ast.Call) \
                    and node.value.args else node.value
                named, wrapped = dotted_name(node.targets[0]) if isinstance(
                    node, ast.Assign) else None, dotted_name(value)
                if named and wrapped and named.startswith("self.") \
                        and wrapped.startswith("self.") and named != wrapped:
                    found[(self.class_of(node), named[5:])] = wrapped[5:]
            return found
        return self.memo("aliases", find)

    def handed_to(self, function):
        """Calls that run ``function`` handed to them (``strategy.run(fn)``,
        ``experimental_run_v2``, ``call_for_each_replica``)."""
        name = getattr(function, "name", None)
        runs = self.memo("runs", lambda: [n for n in self.calls if n.args and method(n) in RUNS])
        return self.memo(("handed", id(function)), lambda: [
            n for n in runs if name and (dotted_name(n.args[0]) or "").split(".")[-1] == name])

    def handed_args(self, function, name, position):
        """``[(value, call)]`` for the parameter ``name`` of a function
        handed to ``strategy.run(fn, args=(...), kwargs={...})``."""
        found = []
        for call in self.handed_to(function):
            for k in call.keywords:
                if k.arg == "kwargs" and isinstance(k.value, ast.Dict):
                    found.extend((v, call) for key, v in zip(k.value.keys, k.value.values)
                                 if string_of(key) == name)
                elif k.arg == "args" and isinstance(k.value, (ast.Tuple, ast.List)) \
                        and 0 <= position < len(k.value.elts):
                    found.append((k.value.elts[position], call))
        return found

    def exclusive(self, a, b):
        """Whether ``b`` sits in the other branch of an ``if`` above ``a``."""
        child = a
        above_b = set(id(n) for n in self.ancestors(b)) | set([id(b)])
        for up in self.ancestors(a):
            if isinstance(up, ast.If):
                in_body = any(child is n for n in up.body)
                others = up.orelse if in_body else up.body
                if any(id(n) in above_b for n in others):
                    return True
            child = up
        return False

    def guards(self, node, seen=None):
        """The conditions ``node`` runs under: ``if`` tests (``("if", test)``)
        and ``tf.cond`` predicates (``("cond", predicate)``), through the
        functions and lambdas around it and the calls of them."""
        seen = set() if seen is None else seen
        found = []
        child = node
        for up in self.ancestors(node):
            if isinstance(up, (ast.If, ast.IfExp, ast.While)) and child is not up.test \
                    and "__name__" not in (dotted_name(getattr(up.test, "left", None)) or ""):
                found.append(("if", up.test))  # (not ``if __name__ == "__main__"``)
            if isinstance(up, FUNCTIONS):
                if id(up) in seen:
                    return found
                seen.add(id(up))
                cond = self.branch_call(up)  # (called with no arguments there)
                if cond is not None and not switched_off(self.ancestors, node, up, BARE_CALL):
                    found.append(("cond", cond.args[0] if cond.args else cond))
                    found += self.guards(cond, seen)
                    return found
                callers = self.callers(up) + self.handed_to(up) + outside_calls(self, up)
                callers = [c for c in callers if not switched_off(self.ancestors, node, up, c)]
                for call in callers[:3]:
                    outer = self.guards(call, seen)
                    if outer:
                        return found + outer
                return found
            child = up
        return found

    def step_scope(self, node):
        """The function that runs every micro-step around ``node``: out of
        the ``tf.cond`` branches it sits in (lambdas, nested defs, methods
        passed by name), to the function that calls the ``tf.cond``."""
        function = self.function_of(node)
        while function is not None:
            cond = self.branch_call(function)
            if cond is None:
                return function
            function = self.function_of(cond)
        return None

    def locally_guarded(self, node):
        """Under an ``if`` of its own function, or in a ``tf.cond`` branch."""
        for up in self.ancestors(node):
            if isinstance(up, (ast.If, ast.IfExp, ast.While)):
                return True
            if isinstance(up, FUNCTIONS):
                return self.branch_call(up) is not None
        return False
