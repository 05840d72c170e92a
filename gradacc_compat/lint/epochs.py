"""``lint``'s GAC110 across epochs: sums that live longer than an epoch's
loop, applied there only under a cycle's condition (``if step % N == 0``,
``tf.cond(count == N, ...)`` in the step the loop calls, ``if ...:
continue`` before the apply), with nothing applied after the loop: the
last partial cycle of each epoch is carried into the next one (and the
last epoch's is dropped). Reported at the epoch's loop, where the carry
crosses; where the epoch makes the sums anew, at that statement, where
the cycle is dropped. Also for an epoch's method that makes the sums
anew before its loop, or only zeroes them after it (each call drops the
last partial cycle). A Keras model's ``train_step`` run by ``fit`` is read in
``keras_fit``.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, last_line, method, nodes_in
from gradacc_compat.lint.counters import counts_across
from gradacc_compat.lint.even_epochs import loop_divides_evenly
from gradacc_compat.lint.gates import always_true, frozen
from gradacc_compat.lint.instances import called, instance_method
from gradacc_compat.lint.keras_fit import applied_sums, carried_by_fit
from gradacc_compat.lint.last_batches import last_batch
from gradacc_compat.lint.scopes import LOOPS
from gradacc_compat.lint.exprs import accumulation, made_zero, mod_parts, no_accumulation

__all__ = ["carried_cycles"]


def carried_cycles(index, report):
    applying = _applying(index)
    if not applying and not any(index.function_of(a.node) is None and a.keys & index.accumulators
                                for a in index.applies):
        return  # (a script's top level may apply too: its loops are read below)
    gated = set(f for f, is_gated in applying.items() if is_gated)
    for outer in (n for n in index.nodes if isinstance(n, ast.For) and _epochs(n)):
        for inner in (n for n in nodes_in(outer) if isinstance(n, LOOPS)
                      and index.loop_of(n) is outer):
            name = _cycles_in(index, inner, applying, gated)
            flush = _applied_after(index, inner, outer, applying) if name else None
            counter = _kept_counting(index, inner, gated) if flush is not None else None
            if counter:
                report(flush, "GAC109", "the partial cycle is applied after the epoch, but `%s` "
                       "keeps counting: the next epoch's first cycle is shorter than N" % counter)
            elif name and flush is None and not loop_divides_evenly(index, inner):
                anew = _made_anew(index, name, inner, outer)
                # (where the sums are made anew, the partial cycle is dropped)
                report(anew or outer, "GAC110", name, "dropped when the next epoch makes `%s` "
                       "anew, unless every epoch's batches are a multiple of N" % name if anew
                       else "carried into the next epoch, unless every "
                       "epoch's batches are a multiple of N (the last epoch's dropped)")
                test, counter = _counts_on(index, inner, outer, applying) if anew \
                    else (None, None)
                if test is not None:
                    report(test, "GAC109", "each epoch makes `%s` anew, but `%s` counts on "
                           "from the epoch before: the first cycle of an epoch is shorter "
                           "than N" % (name, counter))
        _epoch_method(index, outer, applying, gated, report)
    _phases(index, applying, gated, report)
    carried_by_fit(index, gated, report)


def _epoch_method(index, outer, applying, gated, report):
    """The epoch's loop calls a method of the file (``self._train_epoch(e)``)
    whose own loop runs the cycles, and nothing applies what is left, there
    or after the call: the partial cycle is carried into the next epoch
    (a method that makes the sums anew or zeroes them: ``_phases``)."""
    todo = [(outer, n, 2) for n in index.statements_of(outer) if isinstance(n, ast.Call)]
    while todo:  # (two calls deep: ``train()`` that calls ``train_epoch()``)
        caller, call, depth = todo.pop(0)
        callee = called(index, call)
        if not isinstance(callee, ast.FunctionDef) or callee is index.function_of(outer) \
                or _applied_after(index, call, caller, applying) is not None:
            continue
        if depth > 1:
            todo += [(callee, n, depth - 1) for n in nodes_in(callee) if isinstance(n, ast.Call)
                     and index.function_of(n) is callee and index.loop_of(n) is None]
        for loop in (s for s in callee.body if isinstance(s, ast.For)):
            name = _cycles_in(index, loop, applying, gated)
            if name and _applied_after(index, loop, callee, applying) is None \
                    and _zeroed_after(index, loop, callee) is None \
                    and not loop_divides_evenly(index, loop) \
                    and not _restarted_before(callee, loop, name):
                report(outer, "GAC110", name, "carried into the next epoch by `%s`, unless "
                       "every epoch's batches are a multiple of N (the last epoch's dropped)"
                       % callee.name)
                return


def _restarted_before(function, loop, name):
    """``function`` makes ``name`` anew, or runs something named for zeroing
    or resetting (``sess.run(self.zero_ops)``), before ``loop``: no carry."""
    before = [n for s in function.body if s.lineno < loop.lineno for n in nodes_in(s)]
    return any(isinstance(m, ast.Assign) and any(
        (dotted_name(t) or "").split(".")[-1] == name for t in m.targets) for m in before) or any(
        word in (dotted_name(n) or "").lower() for n in before
        if isinstance(n, (ast.Name, ast.Attribute)) for word in ("zero", "reset"))


def _phases(index, applying, gated, report):
    """A method that makes ``self.sums`` anew and then runs a loop of
    cycles over its data, with nothing applied after the loop (a training
    phase, an epoch called from elsewhere): each call drops the last
    partial cycle of the one before. The same where a statement after the
    loop zeroes the sums without applying them (a flush that drops)."""
    for function in (f for f in index.functions if isinstance(f, ast.FunctionDef)):
        made = [s for s in function.body if isinstance(s, ast.Assign) and any(
            (dotted_name(t) or "").startswith("self.") for t in s.targets)
            and (made_zero(s.value) or isinstance(s.value, ast.List) and not s.value.elts)]
        for loop in (s for s in function.body if isinstance(s, ast.For) and not _epochs(s)):
            name = _cycles_in(index, loop, applying, gated)
            anew = [dotted_name(t) for m in made if m.lineno < loop.lineno for t in m.targets]
            if not name or _applied_after(index, loop, function, applying) is not None:
                continue
            zeroed = _zeroed_after(index, loop, function)
            if any(n.split(".")[-1] == name for n in anew):
                report(loop, "GAC110", name, "dropped when `%s` makes `%s` anew at its next "
                       "call, unless its batches are a multiple of N" % (function.name, name))
            elif zeroed is not None:
                report(zeroed, "GAC110", name, "zeroed after the loop without an apply, "
                       "unless its batches are a multiple of N")


def _zeroed_after(index, loop, function):
    """The statement after ``loop`` in ``function`` that zeroes sums
    (``g.assign(tf.zeros_like(g))`` there, or in a function of its own it
    calls, a ``tf.cond`` branch too), or None."""
    end = last_line(loop)
    for statement in (s for s in function.body if s.lineno > end):
        calls = [n for n in nodes_in(statement) if isinstance(n, ast.Call)]
        bodies = calls + [index.callee(c) for c in calls if index.callee(c) is not None]
        if any(method(n) == "assign" and n.args and made_zero(n.args[0])
               for b in bodies for n in nodes_in(b)):
            return statement
    return None


def _applying(index):
    """``{id(function): gated}``: the functions that apply accumulated
    sums (out of the ``tf.cond`` branches they are in), and whether the
    apply is under a condition there."""
    found = {}
    for apply in index.applies:
        if not apply.keys & index.accumulators:
            continue
        function = index.step_scope(apply.node)
        if function is None:
            continue
        tests = [up.test for up in index.ancestors(apply.node) if isinstance(up, ast.If)
                 and index.step_scope(up) is function]
        if any(last_batch(t) for t in tests):
            continue  # (``if step % N == 0 or step % steps_per_epoch == 0``: flushed there)
        if tests and all(frozen(index, t) for t in tests):
            continue  # (a gate the trace fixes: GAC109 says so, no cycle is carried)
        gated = function is not apply.function or index.locally_guarded(apply.node) and not (
            tests and all(always_true(index, t) for t in tests))  # (``if sums[0] is not None``)
        found[id(function)] = found.get(id(function), False) or gated
        # (what calls a step that applies under a cycle's test applies under
        # it too; ``if not USE_ACCUMULATION: ... else:`` only picks a path)
        todo = [function] if function is not apply.function or any(
            not (accumulation(t) or no_accumulation(t)) for t in tests) else []
        for call in _calls_of(index, function):
            # (a step that calls the apply under its test, or runs it by
            # ``strategy.run(apply_fn)`` there)
            caller = index.step_scope(call)
            if caller is not None and index.locally_guarded(call) and not found.get(id(caller)):
                found[id(caller)] = True
                todo.append(caller)
        while todo:  # (and what calls a gated step, as ``accum.apply(opt)`` in a step)
            for call in _calls_of(index, todo.pop()):
                caller = index.step_scope(call)
                if caller is not None and not found.get(id(caller)):
                    found[id(caller)] = True
                    todo.append(caller)
    return found


def _calls_of(index, function):
    """The calls that run ``function``: by name, by ``self.``, through an
    instance of its class (``accum.apply(opt)``), or handed to
    ``strategy.run``."""
    by_instance = [c for c in index.calls if isinstance(c.func, ast.Attribute)
                   and c.func.attr == getattr(function, "name", None)
                   and instance_method(index, c) is function]
    return index.callers(function) + index.handed_to(function) + by_instance


def _epochs(loop):
    words = " ".join(dotted_name(n) or "" for n in nodes_in(loop.target)) + " " + \
        " ".join(dotted_name(n) or "" for n in nodes_in(loop.iter))
    return "epoch" in words.lower()


def _cycles_in(index, inner, applying, gated):
    """The accumulators' label when ``inner`` runs a cycle: a call of a
    step that applies under a condition, or an apply (or a call of a
    function that applies) under a condition of the loop."""
    # (and the calls in the lambdas a ``tf.cond`` of the loop runs)
    lambdas = [n for c in index.statements_of(inner) if method(c) == "cond"
               for b in c.args[1:3] if isinstance(b, ast.Lambda) for n in nodes_in(b.body)]
    for node in list(index.statements_of(inner)) + lambdas:
        callee = called(index, node) if isinstance(node, ast.Call) else None
        if callee is not None and _sums_made_per_call(index, callee):
            continue  # (nothing outlives the call: a loss there is the callee's own)
        if callee is not None and any(last_batch(value) for a in node.args
                                      if isinstance(a, ast.Name)
                                      for value, _ in index.values_of(a.id, node)):
            continue  # (``step(x, is_accum_end)`` with the epoch's last batch in the flag)
        if callee is not None and id(callee) in gated:
            return applied_sums(index, callee)
        here = [k[-1] for a in index.applies if a.node is node
                for k in a.keys & index.accumulators
                if not index.made_each_pass(inner, k, node)]
        if (here or callee is not None and id(callee) in applying) \
                and _conditional(index, node, inner):
            return min(here) if here else applied_sums(index, callee)
    return None


def _sums_made_per_call(index, function):
    """Every accumulator ``function`` applies is a local name of its own."""
    keys = [k for a in index.applies if index.step_scope(a.node) is function
            for k in a.keys & index.accumulators]
    return bool(keys) and all(k[0] == "name" and k[1] == id(function) for k in keys)


def _conditional(index, node, loop):
    """Under an ``if`` of the loop (not one that also applies at the
    epoch's last batch), or after an ``if ...: continue`` in it."""
    for up in index.ancestors(node):
        if up is loop:
            break
        if isinstance(up, ast.If):
            return not last_batch(up.test)
        cond = index.branch_call(up) if isinstance(up, ast.Lambda) else None
        if cond is not None and cond.args:  # (``tf.cond(n == N, lambda: apply(), ...)``)
            return not last_batch(cond.args[0])
    statement = [s for s in loop.body if s is node or any(s is a for a in index.ancestors(node))]
    before = loop.body[:loop.body.index(statement[0])] if statement else []
    return any(isinstance(s, ast.If) and any(isinstance(b, ast.Continue) for b in s.body)
               for s in before)


def _applied_after(index, inner, outer, applying):
    """The call after the batches' loop, in the epoch's, that applies the
    sums left (a flush), else None."""
    end = last_line(inner)
    for node in index.statements_of(outer):
        if getattr(node, "lineno", 0) <= end or not isinstance(node, ast.Call):
            continue
        callee = index.callee(node)
        if (callee is not None and id(callee) in applying) or any(
                a.node is node for a in index.applies):
            return node
    return None


def _kept_counting(index, inner, gated):
    """The ``self.`` counter of the cycle test (``self.k % N == 0``) in the
    step the batches' loop calls, when nothing in the file sets it back
    (``= 0``, ``.assign(0)``) outside ``__init__``: after a flush, the next
    epoch's first cycle ends early."""
    steps = [f for f in (called(index, n) for n in index.statements_of(inner)
                         if isinstance(n, ast.Call)) if f is not None and id(f) in gated]
    for step in steps:
        for node in index.statements_of(step):
            parts = mod_parts(node) if isinstance(node, ast.BinOp) else None
            name = dotted_name(parts[0]) if parts else None
            if name and name.startswith("self.") and not any(
                    _resets(n, name) and getattr(index.function_of(n), "name", "") != "__init__"
                    for n in index.nodes):
                return name
    return None


def _counts_on(index, inner, outer, applying):
    """``(test, counter)``: ``if counter % N == 0`` (or ``if counter <
    N: ... else: <apply>``) in ``inner`` around a run of a function that
    applies, for a count that runs on across epochs
    (``counters.counts_across``); else ``(None, None)``."""
    for branch in (n for n in nodes_in(inner) if isinstance(n, ast.If) and any(
            isinstance(c, ast.Call) and id(called(index, c)) in applying
            for s in n.body + n.orelse for c in nodes_in(s))):
        parts = next((mod_parts(n) for n in nodes_in(branch.test)
                      if isinstance(n, ast.BinOp) and mod_parts(n)), None)
        counter = parts[0] if parts else next(
            (n.left for n in nodes_in(branch.test) if isinstance(n, ast.Compare)
             and isinstance(n.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq))), None)
        counter = counter.id if isinstance(counter, ast.Name) else None
        if counter and counts_across(index, counter, outer):
            return branch.test, counter
    return None, None


def _resets(node, name):
    """``name = 0`` or ``name.assign(0)`` (or zeros of any other make)."""
    if isinstance(node, ast.Assign) and any(dotted_name(t) == name for t in node.targets):
        return made_zero(node.value)
    return method(node) == "assign" and isinstance(node.func, ast.Attribute) \
        and dotted_name(node.func.value) == name and bool(node.args) and made_zero(node.args[0])


def _made_anew(index, name, inner, outer):
    """``name = ...`` in the epoch's loop itself, before the batches' loop
    (the last such statement), or None."""
    return next((n for n in sorted(nodes_in(outer), key=lambda n: -getattr(n, "lineno", 0))
                 if isinstance(n, ast.Assign) and n.lineno < inner.lineno
                 and index.loop_of(n) is outer
                 and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)), None)
