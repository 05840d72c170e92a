"""``lint``'s GAC110 for the data running out mid-cycle: a ``try`` whose
body reaches the accumulation (directly or a few calls down, through
``strategy.run``) and whose ``except StopIteration`` / ``except
tf.errors.OutOfRangeError`` ends the epoch without applying or resetting
the sums: what the last partial cycle added stays in them, carried into
the next epoch's first cycle (or dropped with them).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.accumulates import label
from gradacc_compat.lint.ast_helpers import FUNCTIONS, dotted_name, last_line, method, nodes_in
from gradacc_compat.lint.branches import branch_function
from gradacc_compat.lint.flags import switched_off
from gradacc_compat.lint.scopes import RUNS

__all__ = ["endless", "ran_out"]

_ENDS = ("StopIteration", "OutOfRangeError")
_SETTLES = ("apply_gradients", "minimize", "reset", "flush", "zero_grad", "assign")


def endless(index, loop):
    """``for batch in dataset`` over a dataset repeated without a count:
    ``.repeat()`` where the loop's source is made, or in the function of
    this file that makes it (``dataset, n = input_fn(..., is_train=True)``;
    not when the call switches that ``repeat()`` off). The loop never ends,
    so no last partial cycle is lost when it does."""
    source = getattr(loop, "iter", None)
    return source is not None and _endless_source(index, source, 2)


def _endless_source(index, expr, hops):
    """``expr`` reads a dataset repeated without a count: ``.repeat()`` in
    it, in the function of this file a call in it makes it with, or in
    what its names are bound to (``hops`` bindings back: a parameter to its
    callers' arguments, ``d = strategy.experimental_distribute_dataset(d)``,
    ``d, n = make_dataset(mode="train")``)."""
    for call in (c for c in nodes_in(expr) if isinstance(c, ast.Call)):
        maker = index.callee(call)
        if _repeats(call) or maker is not None and any(
                _repeats(c) and not switched_off(index.ancestors, c, maker, call)
                for c in nodes_in(maker)):
            return True
    called = set(id(c.func) for c in nodes_in(expr) if isinstance(c, ast.Call))
    return hops > 0 and any(
        _endless_source(index, value, hops - 1)
        for name in nodes_in(expr) if isinstance(name, ast.Name) and id(name) not in called
        for value, _ in index.values_of(name.id, name)
        # (what a maker returns is read above, with the call's arguments)
        if not any(isinstance(up, ast.Return) for up in index.ancestors(value)))


def _repeats(call):
    return method(call) == "repeat" and not (call.args or call.keywords)


def ran_out(index, report):
    consumed = set(k for a in index.applies for k in a.keys) & index.accumulators
    adds = dict((id(a.function), a) for a in index.accumulates
                if a.function is not None and a.key in consumed)
    if not adds:
        return
    for handler in (n for n in index.nodes if isinstance(n, ast.ExceptHandler)):
        names = [dotted_name(n) or "" for n in nodes_in(handler.type)] if handler.type else []
        if not any(name.split(".")[-1] in _ENDS for name in names):
            continue
        guarded = index.parents.get(handler)
        if _from_endless(index, guarded):
            continue  # (the end never comes)
        add = _reached(index, getattr(guarded, "body", []), adds, 4)
        if add is not None and not _settles(index, handler.body, 1) \
                and not _flushed_after(index, guarded):
            report(handler, "GAC110", label(add),
                   "left in the sums when the data runs out mid-cycle (this `except` "
                   "neither applies nor resets them): carried into the next epoch")


def _from_endless(index, guarded):
    """The function around ``guarded`` iterates (``iter(dataset)``) only
    over datasets repeated without a count."""
    iters = [c for c in index.statements_of(index.function_of(guarded))
             if isinstance(c, ast.Call) and dotted_name(c.func) == "iter" and c.args]
    return bool(iters) and all(_endless_source(index, c.args[0], 4) for c in iters)


def _reached(index, statements, adds, hops):
    """The accumulate the calls in ``statements`` reach (``hops`` calls
    down, through ``strategy.run(fn, ...)`` too), or None."""
    for call in (n for s in statements for n in nodes_in(s) if isinstance(n, ast.Call)):
        handed = branch_function(index, call.args[0], call) \
            if method(call) in RUNS and call.args else None
        for callee in (index.callee(call), handed) + tuple(_aliased(index, call)):
            if callee is None:
                continue
            if id(callee) in adds:
                return adds[id(callee)]
            body = [callee.body] if isinstance(callee, ast.Lambda) else callee.body
            found = hops > 1 and _reached(index, body, adds, hops - 1)
            if found:
                return found
    return None


def _flushed_after(index, guarded):
    """Something after the loop around the ``try``, in its function,
    applies or resets (the partial cycle flushed once the data ends)."""
    loop = index.loop_of(guarded)
    if loop is None:
        return False
    end = last_line(loop)
    later = [n for n in index.statements_of(index.function_of(loop))
             if isinstance(n, ast.stmt) and n.lineno > end]
    return _settles(index, later, 1)


def _settles(index, statements, hops):
    """Whether ``statements`` apply or reset anything (a call of the file's
    that does, ``hops`` deep)."""
    for call in (n for s in statements for n in nodes_in(s) if isinstance(n, ast.Call)):
        if method(call) in _SETTLES:
            return True
        callee = index.callee(call)
        if hops > 0 and callee is not None and not isinstance(callee, FUNCTIONS[-1]) \
                and _settles(index, callee.body, hops - 1):
            return True
    return False


def _aliased(index, call):
    """The methods an attribute called (``self._train_step(...)``) is bound
    to in its class: ``self._train_step = self.train_single_step`` or
    ``= tf.function(self.train_single_step)``."""
    name = dotted_name(call.func) or ""
    if not name.startswith("self.") or index.callee(call) is not None:
        return []
    found = []
    for node in index.assigns:
        if isinstance(node, ast.Assign) and any(dotted_name(t) == name for t in node.targets):
            value = node.value.args[0] if isinstance(node.value, ast.Call) \
                and method(node.value) == "function" and node.value.args else node.value
            found.append(branch_function(index, value, node))
    return [f for f in found if f is not None]
