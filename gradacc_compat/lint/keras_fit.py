"""``lint``'s GAC110 for a Keras model: a ``train_step`` that accumulates
and applies under a cycle's condition, run by ``Model.fit`` (of this file
or of another), carries the last partial cycle of each epoch into the
next one, unless each epoch is a multiple of N batches (``even_epochs``)
or a callback applies it as the epoch ends. Reported at the cycle's test,
where the fix goes.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, method, nodes_in
from gradacc_compat.lint.applies_counted import waits_on_itself
from gradacc_compat.lint.counters import never_advanced
from gradacc_compat.lint.even_epochs import divides_evenly
from gradacc_compat.lint.gates import frozen
from gradacc_compat.lint.instances import called
from gradacc_compat.lint.exprs import accumulation, no_accumulation

__all__ = ["applied_sums", "carried_by_fit"]


def carried_by_fit(index, gated, report):
    """``gated``: the ids of the functions that apply the sums under a
    condition (``epochs``)."""
    fits = [c for c in index.calls if method(c) == "fit" and isinstance(c.func, ast.Attribute)]
    step = _keras_steps(index, gated) if not _flushed_on_epoch_end(index) else None
    if step and step[2] is not None and frozen(index, step[2]):
        return  # (a gate the trace fixes: GAC109 says so, no cycle is carried)
    fits = [c for c in fits if step and _of_class(index, c.func.value, step[1])]
    if fits and step[2] is not None and all(
            divides_evenly(index, c, step[2], step[1]) for c in fits):
        return  # (each epoch a multiple of N batches, as the file says)
    own = _own_fit(step[1]) if step and step[2] is not None else None
    if own is not None:
        # (a class with a fit of its own: its epochs' loop is in the file)
        report(own, "GAC110", step[0], "carried into the next epoch by the "
               "class's own `fit`, unless every epoch's batches are a multiple of N (the "
               "last epoch's dropped)")
    elif fits:  # (the first fit of that model: one mistake, however many fits)
        fit = min(fits, key=lambda c: c.lineno)
        report(step[2] or fit, "GAC110", step[0], "carried into the next epoch by the `fit` "
               "of line %d, unless every epoch's batches are a multiple of N (the last "
               "epoch's dropped)" % fit.lineno)
    elif step and step[2] is not None and _keras_model(step[1]) and not _stuck(index, step[2]):
        # (a Keras model's train_step runs under a fit, of this file or not)
        report(step[2], "GAC110", step[0], "carried into the next epoch by `Model.fit`, "
               "which runs this train_step, unless every epoch's batches are a multiple "
               "of N (the last epoch's dropped)")


def _own_fit(cls):
    """The first loop of a ``fit`` that ``cls`` defines itself (its epochs')."""
    fits = [f for f in getattr(cls, "body", []) if getattr(f, "name", None) == "fit"]
    loops = [n for f in fits for n in nodes_in(f) if isinstance(n, (ast.For, ast.While))]
    return min(loops, key=lambda n: n.lineno) if loops else None


def _stuck(index, gate):
    """A gate that never opens (or opens once): its counter never moves, or
    it is the optimizer's own count of applies (GAC109 says so)."""
    return any(never_advanced(index, gate, dotted_name(n)) for n in nodes_in(gate)
               if isinstance(n, ast.Attribute) and dotted_name(n)) or any(
        waits_on_itself(index, gate, a) for a in index.applies
        if a.keys & index.accumulators and isinstance(a.node, ast.Call))


def _keras_model(cls):
    """``cls`` is built on a Keras ``Model`` (``keras.Model``,
    ``tf.keras.models.Model``), or on a base of another file whose API its
    ``train_step`` uses (``self.compiled_loss``, ``self.compiled_metrics``)."""
    return cls is not None and (any(
        (dotted_name(b) or "").split(".")[-1] == "Model" for b in cls.bases) or any(
        isinstance(n, ast.Attribute) and dotted_name(n.value) == "self"
        and n.attr in ("compiled_loss", "compiled_metrics") for f in cls.body
        if isinstance(f, ast.FunctionDef) and f.name == "train_step" for n in nodes_in(f)))


def _keras_steps(index, gated):
    """``(label, class, gate)`` of a Keras ``train_step`` that accumulates
    and applies under a condition (itself, or the method it calls), or
    None. ``gate`` is that condition, where the fix goes (or None)."""
    for function in index.functions:
        if getattr(function, "name", None) != "train_step":
            continue
        steps = [function] if id(function) in gated else [
            index.callee(c) for c in nodes_in(function) if isinstance(c, ast.Call)
            and index.callee(c) is not None and id(index.callee(c)) in gated]
        for step in steps[:1]:
            return applied_sums(index, step), index.class_of(function), _gate(index, step)
    return None


def _gate(index, function, hops=2):
    """The first condition an apply of ``function``'s sums runs under: in
    it, else in the method it calls that applies, else at that call."""
    applying = [a for a in index.applies if a.keys & index.accumulators]
    nodes = [a.node for a in applying if index.step_scope(a.node) is function]
    calls = [c for c in nodes_in(function) if isinstance(c, ast.Call)
             and index.callee(c) not in (None, function)
             and any(index.step_scope(a.node) is index.callee(c) for a in applying)]
    inner = [_gate(index, index.callee(c), hops - 1) for c in calls if hops > 0 and not nodes]
    guards = [[test for _, test in index.guards(node)
               if not (accumulation(test) or no_accumulation(test))]  # (a path, no cycle)
              for node in nodes or calls]
    inner = [t for t in inner if t is not None]
    # (a cycle's test first, however far out: not ``if sums and variables:``
    # in the method the ``tf.cond(count == N, ...)`` of the call runs, nor
    # ``if grads_and_vars:`` inside the branch that tf.cond runs)
    for group in ([t for t in inner if _counts(t)], [t for g in guards for t in g if _counts(t)],
                  inner or [g[0] for g in guards if g]):
        if group:
            return min(group, key=lambda t: t.lineno)
    return None


def _counts(test):
    """A test that compares or takes a modulo (a cycle's)."""
    return any(isinstance(n, ast.Compare) and not all(
        isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in n.ops)
        or isinstance(n, ast.BinOp) and isinstance(
        n.op, ast.Mod) or method(n) in ("equal", "greater_equal", "less", "mod", "floormod")
        for n in nodes_in(test))


def _of_class(index, receiver, cls):
    """``receiver`` may be a model of ``cls`` (or of a class of the file
    built on it): ``self``/``super()`` in it, ``cls()`` in its class
    methods, a name bound to ``Cls(...)``, or one lint cannot follow (a
    parameter, an attribute). ``MinMaxScaler().fit(x)`` is not, nor a name
    bound to anything else."""
    if cls is None:
        return False
    names = set([cls.name]) | set(c.name for c in index.nodes
                                  if isinstance(c, ast.ClassDef)
                                  and cls.name in [dotted_name(b) for b in c.bases])
    inside = index.class_of(index.function_of(receiver) or receiver)
    if isinstance(receiver, ast.Call):
        called = dotted_name(receiver.func) or ""
        return (called == "super" and inside is not None and inside.name in names) or (
            called == "cls" and inside is not None and inside.name in names) or (
            called.split(".")[-1] in names)
    if isinstance(receiver, ast.Name) and receiver.id == "self":
        return inside is not None and inside.name in names
    if isinstance(receiver, ast.Name):  # (a parameter nothing in the file passes: maybe)
        values = [b for v, _ in index.values_of(receiver.id, receiver)
                  for b in ((v.body, v.orelse) if isinstance(v, ast.IfExp) else (v,))]
        return not values or any(isinstance(v, ast.Call) and _of_class(index, v, cls)
                                 for v in values)  # (``m = base if n <= 1 else Accum(...)``)
    return isinstance(receiver, ast.Attribute)  # (``self.model``: maybe)


def _flushed_on_epoch_end(index):
    """A callback's ``on_epoch_end`` (or ``on_train_end``) in the file that
    does something to the sums (applies, calls a method of the file that
    applies or one of another file named to flush or apply, or touches a
    sum), not one that only reports or saves; or a model's
    ``reset_metrics`` (``fit`` calls it as each epoch begins) that calls a
    method which applies."""
    methods = dict((f.name, f) for f in index.functions if isinstance(f, ast.FunctionDef))
    return any(getattr(f, "name", None) in ("on_epoch_end", "on_train_end") and (
        _reaches_apply(index, f, 3) or any(
            _reaches_apply(index, methods[n.attr], 3) if n.attr in methods
            else any(w in n.attr.lower() for w in ("flush", "apply", "accum"))
            for n in nodes_in(f) if isinstance(n, ast.Attribute)
            and isinstance(index.parents.get(n), ast.Call) and index.parents[n].func is n)
        or index.keys_in(f, settings=False) & index.accumulators) or (
        getattr(f, "name", None) == "reset_metrics" and _reaches_apply(index, f, 3))
        for f in index.functions)


def _reaches_apply(index, function, hops):
    """``function`` applies, or calls (or hands to ``tf.cond``) a method of
    its class that does, ``hops`` deep."""
    if any(index.function_of(a.node) is function for a in index.applies):
        return True
    cls = index.class_of(function)
    methods = dict((f.name, f) for f in getattr(cls, "body", []) if isinstance(f, ast.FunctionDef))
    named = set(n.attr for n in nodes_in(function) if isinstance(n, ast.Attribute)
                and dotted_name(n.value) == "self")
    return hops > 0 and any(_reaches_apply(index, methods[name], hops - 1)
                            for name in named if name in methods)


def applied_sums(index, function):
    """The name of the sums ``function`` applies, itself or in the
    functions it calls or hands to ``strategy.run`` (for the message)."""
    reached, todo = set([id(function)]), [function]
    while todo:
        current = todo.pop()
        for call in (c for c in index.calls if index.function_of(c) is current):
            callee = called(index, call)
            if callee is not None and id(callee) not in reached:
                reached.add(id(callee))
                todo.append(callee)
    keys = sorted(k[-1] for a in index.applies if id(index.step_scope(a.node)) in reached
                  for k in a.keys & index.accumulators)
    return keys[0] if keys else "the sums"
