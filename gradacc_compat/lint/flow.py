"""One file's accumulation, as a small dataflow over its ``ast``: where
gradients are summed into accumulators (``accumulates``), and which
applies consume them (through ``self.`` attributes, closures, ``tf.cond``
branches, lambdas, nested defs, local assignments and the arguments of
calls in the file).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint import parameters, session_runs
from gradacc_compat.lint.accumulates import HELPER_READS, Accumulate, Accumulates
from gradacc_compat.lint.apply_calls import is_apply
from gradacc_compat.lint.ast_helpers import (FUNCTIONS, dotted_name, method, nodes_in,
                                             parameter_names, same_arm)
from gradacc_compat.lint.exprs import GRADIENT_CALLS, loads
from gradacc_compat.lint.returns import returned
from gradacc_compat.lint.scopes import LOOPS, Scopes

__all__ = ["Apply", "Index"]

_COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)


class Apply(object):
    """An ``apply_gradients`` at ``node`` in ``function``: ``keys`` are the
    accumulators its gradients come from, ``chain`` the expressions they
    pass through on the way (the argument, then the local assignments);
    ``fed``, what TF1 session runs feed to the placeholders it applies."""

    def __init__(self, node, function, keys, chain, fed=()):
        self.node, self.function, self.keys, self.chain = node, function, keys, chain
        self.fed = fed  # [(value, run)]: fed to its placeholders by session runs


class Index(Scopes, Accumulates):
    """The accumulators and applies of one module."""

    def __init__(self, tree):
        Scopes.__init__(self, tree)
        self._keying = set()
        self.accumulates = self._find_accumulates()
        self.accumulates += [Accumulate(key, a.node, a.function, a.value)
                             for a in list(self.accumulates)
                             for key in parameters.callers_keys(self, a)]
        self.applies = self._find_applies()
        self.accumulates += self._appended(self.applies)
        self.accumulators = set(a.key for a in self.accumulates)

    # ---------------------------------------------------------------- keys
    def key(self, node):
        """The accumulator key of an expression that names one (``acc``,
        ``acc[i]``, ``self.acc``, ``self.acc[i]``, and ``acc[i].assign_add``,
        whose call returns the updated ``acc[i]``), or None."""
        if isinstance(node, ast.Attribute) and node.attr == "assign_add":
            node = node.value
        while isinstance(node, ast.Subscript):
            node = node.value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                method(node) in ("values", "items", "keys", "read_value", "value")
                or _helper_getter(method(node))):
            node = node.func.value  # (a dict's, a variable's value; a helper's sums)
        name = dotted_name(node)
        if not name:
            return None
        head = name.split(".")[0]
        if head == "self" and "." in name:
            owner = self.class_of(self.function_of(node) or node)
            return ("self", owner.name if owner is not None else None, name.split(".")[1])
        if "." in name:
            if (name.split(".")[-1] in HELPER_READS + ("read_value",)
                    or _helper_getter(name.split(".")[-1])) and isinstance(node, ast.Attribute):
                return self.key(node.value)  # a helper's sums; a variable's value
            return ("attr", name)
        if id(node) in self._keying:
            return None  # (``for g in f(g)``: the name's own loop)
        self._keying.add(id(node))
        try:
            alias = self._loop_alias(node)
        finally:
            self._keying.discard(id(node))
        if alias is not None:
            return alias
        binder = self.binder(head, node)
        alias = self._plain_alias(head, binder)
        if alias is not None:
            return self.key(alias)
        return ("name", id(binder), head)

    def _plain_alias(self, name, binder):
        """``self.sums`` when ``binder`` binds ``name`` once, as
        ``name = self.sums`` (a local name for an attribute)."""
        if binder is None:
            return None
        values = self.assignments(binder)
        bound = values.get(name, ())
        if len(bound) == 1 and isinstance(bound[0][0], ast.Attribute) \
                and (dotted_name(bound[0][0]) or "").startswith("self."):
            return bound[0][0]
        return None

    def _loop_alias(self, node):
        """``a`` in ``for a, g in zip(accums, grads)`` (or a comprehension):
        the key of ``accums``."""
        item = self.loop_item(node)
        return self.key(item) if item is not None else None

    def loop_item(self, node):
        """The sequence the name ``node`` walks: ``accums`` for ``a`` in
        ``for a, g in zip(accums, grads)`` (or a comprehension), ``sums``
        for ``acc`` in ``for name, acc in sums.items()``; else None."""
        name = node.id
        for up in self.ancestors(node):
            generators = []
            if isinstance(up, LOOPS) and isinstance(up, ast.For):
                generators = [up]
            elif isinstance(up, _COMPREHENSIONS):
                generators = up.generators
            for gen in generators:
                source = gen.iter
                if isinstance(source, ast.Call) and method(source) in ("zip", "enumerate") \
                        and isinstance(gen.target, ast.Tuple):
                    items = list(source.args)
                    if method(source) == "enumerate":
                        items = [None] + items
                    for target, item in zip(gen.target.elts, items):
                        if isinstance(target, ast.Tuple) and item is not None \
                                and isinstance(item, ast.Call) and method(item) == "zip":
                            for t2, i2 in zip(target.elts, item.args):
                                if isinstance(t2, ast.Name) and t2.id == name:
                                    return i2
                        if isinstance(target, ast.Name) and target.id == name and item is not None:
                            return item
                elif isinstance(gen.target, ast.Name) and gen.target.id == name:
                    return source
                elif method(source) == "items" and isinstance(gen.target, ast.Tuple) \
                        and len(gen.target.elts) == 2 and isinstance(gen.target.elts[1], ast.Name) \
                        and gen.target.elts[1].id == name:
                    return source
            if isinstance(up, FUNCTIONS) and not isinstance(up, ast.Lambda):
                break
        return None

    def keys_in(self, node, settings=True):
        found = set()
        for sub in loads(node, settings):
            key = self.key(sub)
            if key is not None:
                found.add(key)
        return found

    # ------------------------------------------------------------- applies
    def _find_applies(self):
        found = []
        for node in self.nodes:
            if not (isinstance(node, ast.Call) and is_apply(self, node)):
                continue
            arg = node.args[0] if node.args else None
            for kw in node.keywords:
                if kw.arg == "grads_and_vars":
                    arg = kw.value
            if arg is None:
                continue
            keys, chain = self.sources(arg, node, depth=8, refine=True)
            fed = session_runs.fed(self, node, keys)
            for value, run in fed:
                keys = keys | self.sources(value, run)[0]
            found.append(Apply(node, self.function_of(node), keys, chain, fed))
        known = set(id(run) for a in found for run in session_runs.runs_of(self, a.node))
        for run, fed in session_runs.fed_updates(
                self, set(a.key for a in self.accumulates), known):
            keys = set(k for value, _ in fed for k in self.sources(value, run)[0])
            found.append(Apply(run, self.function_of(run), keys, [fed[0][0]], fed))
        return found

    def sources(self, expr, at, depth=4, refine=False):
        """The keys ``expr`` (at node ``at``) reads, following back the
        assignments of the names it reads in the scope that binds them
        (closures too), the loops and comprehensions that bind them, and a
        function's parameters to the arguments of its calls in this file
        (``depth`` hops; with ``refine``, ``grads = clip(grads)`` that
        rebinds the same name is no hop); and the expressions passed
        through."""
        return self.memo(("sources", id(expr), id(at), depth, refine),
                         lambda: self._sources(expr, at, depth, refine))

    def _sources(self, expr, at, depth, refine):
        keys, chain, seen = set(), [], {}
        todo = [(expr, at, depth, None)]
        while todo:
            current, where, left, bound = todo.pop(0)
            if seen.get(id(current), -1) >= left:
                continue
            if id(current) not in seen:
                keys |= self.keys_in(current, settings=False)
                chain.append(current)
            seen[id(current)] = left
            if left <= 0:
                continue
            for load in loads(current, settings=False):
                if isinstance(load, ast.Attribute) and load.attr in HELPER_READS \
                        and isinstance(load.value, ast.Name) and load.value.id != "self":
                    load = load.value  # (a helper's sums: where the helper comes from)
                if isinstance(load, ast.Name):
                    # (an element of a list the sums are written through:
                    # ``sums.append(total)``, then ``sums[i] += g``)
                    keys.update(self.key(call.func.value) for call in self.appends(
                        self.binder(load.id, where)).get("*" + load.id, ()))
                    # (``grads = clip(grads)`` refines the same name: no hop)
                    for value, node in self.values_of(load.id, where):
                        # (or walks its elements: ``for g in grads``)
                        cost = 0 if refine and (load.id == bound or isinstance(
                            node, _COMPREHENSIONS)) else 1
                        todo.append((value, node, left - cost, load.id))
        return keys, chain

    def _around_if(self, name, last, found, around):
        """The bindings that reach past a one-armed ``if`` that rebinds
        ``name`` (``if post: sums = [s / N ...]``): those before the ``if``."""
        ifs = [up for up in self.ancestors(last) if isinstance(up, ast.If)
               and id(up) not in around]
        if not ifs:
            return []
        top = ifs[-1]
        inside = set(id(n) for b in top.orelse for n in nodes_in(b))
        if top.orelse and any(id(node) in inside for _, node in found):
            return []  # (bound on both arms)
        return [pair for pair in self.values_of(name, top)
                if all(pair[1] is not node for _, node in found)]

    def bound_in_pass(self, loop, key, before, function):
        """The assignments to ``key`` in the pass of ``loop`` that runs
        ``before``, ahead of it (``loop`` None: outside the loops of
        ``function``)."""
        scope = loop if loop is not None else function
        return [n for n in self.statements_of(scope) if isinstance(n, ast.Assign)
                and n.lineno < before.lineno and self.loop_of(n) is loop
                and any(self.key(t) == key for t in n.targets)]

    def made_each_pass(self, loop, key, before):
        """The sums ``key`` are made anew as zeros in every pass of
        ``loop`` that runs ``before``, ahead of it (not under an ``if`` of
        the loop, or in the arm of one that also holds ``before``): nothing
        outlives the pass."""
        around = dict((id(up), up) for up in self.ancestors(before))
        return any(any(method(c) in ("zeros_like", "zeros") for c in nodes_in(n.value))
                   and not any(isinstance(up, ast.If) and not same_arm(
                       around.get(id(up)), n, before) for up in self.ancestors_to(n, loop))
                   for n in self.bound_in_pass(loop, key, before, None))

    def ancestors_to(self, node, top):
        """The ancestors of ``node`` below ``top`` (all of them when it is none)."""
        for up in self.ancestors(node):
            if up is top:
                return
            yield up

    def _returned_apart(self, node, around):
        """``node`` is in the body of an ``if`` that ends in ``return``, and
        the place it is read (whose ancestors are ``around``) is not: ``if
        accum_steps == 1: grads = clip(grads); ...; return`` binds nothing
        the accumulation after it reads."""
        child = node
        for up in self.ancestors(node):
            if isinstance(up, FUNCTIONS) or id(up) in around:
                return False
            if isinstance(up, ast.If) and any(child is s for s in up.body) and _returns(up.body):
                return True
            child = up
        return False

    def values_of(self, name, at):
        """``[(expression, node)]`` that bind ``name`` as seen at ``at``."""
        found = []
        for up in [at] + list(self.ancestors(at)):
            generators = up.generators if isinstance(up, _COMPREHENSIONS) else (
                [up] if isinstance(up, ast.For) else [])
            for gen in generators:
                if name in self.memo(("target", id(gen.target)), lambda: set(
                        n.id for n in nodes_in(gen.target) if isinstance(n, ast.Name))):
                    found.append((gen.iter, up))
            if found or isinstance(up, FUNCTIONS):
                break
        binder = self.binder(name, at)
        assigned = self.assignments(binder)
        around = set(id(up) for up in self.ancestors(at)) | set([id(at)])
        # (``for i, g in enumerate(grads): g = clip(g); acc.assign_add(g)``:
        # a loop variable rebound in the body before ``at`` is that binding)
        loop = found[0][1] if found and isinstance(found[0][1], ast.For) else None
        if found and (loop is None or not any(
                loop.lineno < node.lineno <= at.lineno and id(node) not in around
                and any(up is loop for up in self.ancestors(node))
                for _, node in assigned.get(name, ()))):
            return found
        loop_pair, found = (found[0] if found else None), []
        # (the bindings before ``at``, latest first; whether one is cut off
        # by a ``return`` is asked only of those the search reaches: a
        # script's top level can bind a name hundreds of times)
        before = sorted([(value, node) for value, node in assigned.get(name, ())
                         if node.lineno <= at.lineno and id(node) not in around and (
                             loop is None or any(up is loop for up in self.ancestors(node)))],
                        key=lambda pair: pair[1].lineno)
        reaching = lambda pair: not self._returned_apart(pair[1], around)
        last = next((pair[1] for pair in reversed(before) if reaching(pair)
                     and not self.exclusive(pair[1], at)), None)
        if last is not None:  # the last binding before, and those in the other branch of an if
            tops = [up.lineno for up in self.ancestors(last) if isinstance(up, ast.If)]
            start = min(tops or [last.lineno])
            found.extend(pair for pair in before if pair[1].lineno >= start and reaching(pair)
                         and (pair[1] is last or self.exclusive(pair[1], last))
                         and not self.exclusive(pair[1], at))
            found.extend(value for pair in list(found) if isinstance(pair[1], ast.Assign)
                         for value in returned(self, name, pair[1]))
            found.extend(self._around_if(name, last, found, around))
        if loop_pair is not None and (last is None or any(
                isinstance(up, ast.If) for up in self.ancestors_to(last, loop))):
            found.append(loop_pair)  # (rebound under an ``if``: the loop's own value too)
        since = max([pair[1].lineno for pair in found] or [0])
        found.extend((node.args[-1], node) for node in self.appends(binder).get(name, ())
                     if since <= node.lineno <= at.lineno)
        if not found and binder is not None and not isinstance(binder, ast.Lambda):
            params = parameter_names(binder)
            keyword_only = [a.arg for a in getattr(binder.args, "kwonlyargs", [])]
            if name in params or name in keyword_only:
                position = params.index(name) if name in params else -1
                if params and params[0] == "self":
                    position -= 1
                for call in self.callers(binder):
                    if 0 <= position < len(call.args):
                        found.append((call.args[position], call))
                    found.extend((k.value, call) for k in call.keywords if k.arg == name)
                found.extend(self.handed_args(binder, name, position))
        return found


def _returns(body):
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _helper_getter(name):
    """``get_gradients``, ``get_averaged_gradients``: a helper object's
    method that hands its sums over."""
    return (name or "").startswith("get_") and (name or "").endswith(("gradients", "grads")) \
        and name not in GRADIENT_CALLS  # (Keras's ``optimizer.get_gradients(loss, params)``)

