"""``lint``'s checks of what runs on every micro-step beside the
accumulation: clipping (GAC106, in ``clips``), step counters (GAC107, in
``counters``), reductions across replicas or workers (GAC104), an apply of
the micro-batch's own gradients (GAC102); a running mean of gradients
already divided by N (GAC108) is in ``double_means``.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint import (accumulating_compute, branches, bypassed_gate, callbacks, clips,
                                 counters, discarded, double_means, epochs, exhausted, fed,
                                 first_update, graph_order, keras_updates, masked, overwritten,
                                 prebuilt, session_loops, trained_losses, unrun_adds, unused_flags)
from gradacc_compat.lint.accumulates import label
from gradacc_compat.lint.ast_helpers import dotted_name, method, nodes_in, string_of
from gradacc_compat.lint.scopes import RUNS
from gradacc_compat.lint.exprs import (GRADIENT_CALLS, accumulation, loads, no_accumulation,
                                        reads_modulo)

__all__ = ["check_accumulate", "check_module"]

_REDUCES = ("all_reduce", "allreduce", "batch_reduce_to", "reduce_to", "allreduce_",
            "grouped_allreduce", "aggregate_gradients", "_aggregate_gradients")


def check_module(index, report):
    """The checks that look at the whole module once."""
    _raw_applies(index, report)
    counters.own_iterations(index, report)
    counters.aliased_iterations(index, report)
    counters.decayed_lr(index, report)
    double_means.running_means(index, report)
    fed.fed_decisions(index, report)
    branches.skipped_steps(index, report)
    branches.double_counted(index, report)
    branches.else_counts(index, report)
    session_loops.partial_cycles(index, report)
    session_loops.short_cycles(index, report)
    session_loops.counted_with_adds(index, report)
    session_loops.applied_every_batch(index, report)
    masked.masked_sums(index, report)
    masked.zero_updates(index, report)
    keras_updates.get_updates(index, report)
    zeroed = set()  # (every sum, whether or not an apply of the file takes it)
    for add in index.accumulates:
        overwritten.zeroed_past_gate(index, report, add, zeroed)
    epochs.carried_cycles(index, report)
    callbacks.applied_beside_fit(index, report)
    callbacks.skipped_by_returning(index, report)
    discarded.thrown_away_means(index, report)
    discarded.thrown_away_resets(index, report)
    unused_flags.never_read(index, report)
    unrun_adds.never_run(index, report)
    exhausted.ran_out(index, report)
    first_update.applied_alone(index, report)
    graph_order.unordered_tests(index, report)
    prebuilt.applies_outside_branch(index, report)
    accumulating_compute.ungated_apply(index, report)
    accumulating_compute.patched_get_gradients(index, report)
    bypassed_gate.bypassed_gates(index, report)
    double_means.scaled_means(index, report)


def check_accumulate(index, report, add, reported):
    """The checks of what runs beside the accumulate ``add``; ``reported``
    holds ``(code, line)`` already said."""
    clips.clipped_each(index, report, add, reported)
    counters.step_counter(index, report, add, reported)
    _reduce(index, report, add, reported)
    overwritten.added_after_loop(index, report, add, reported)
    overwritten.restarted_each_pass(index, report, add, reported)
    trained_losses.trained_on_batch(index, report, add, reported)


def _raw_applies(index, report):
    """GAC102: an unguarded apply of the micro-batch's own gradients in
    the function that also accumulates them for a later apply (or adds
    those same gradients to sums that nothing applies)."""
    consumed = set(k for a in index.applies for k in a.keys)
    accumulating = {}
    for add in index.accumulates:
        accumulating.setdefault(id(index.step_scope(add.node)), []).append(add)
    for apply in index.applies:
        if apply.keys & index.accumulators or index.locally_guarded(apply.node) \
                or isinstance(index.parents.get(apply.node), (ast.Assign, ast.keyword)):
            continue  # (``train_op = opt.apply_gradients(...)``: an op the session may run)
        gradients = set(id(e) for e in apply.chain if isinstance(e, ast.Call)
                        and method(e) in GRADIENT_CALLS)
        adds = [a for a in accumulating.get(id(index.step_scope(apply.node)), ())
                if not _returned_before(index, a, apply) and (a.key in consumed or gradients & set(
                    id(e) for e in index.sources(a.value, a.value)[1]))]
        # (another model's own step beside the sums: ``zip(v_grads, v_model.variables)``)
        theirs = set(_variables(b) for b in index.applies
                     if b.keys & set(a.key for a in adds)) if adds else set()
        mine = _variables(apply)
        if adds and not (mine and theirs and None not in theirs and mine not in theirs):
            report(apply.node, "GAC102", label(adds[0]), "")


def _variables(apply):
    """The dotted name of the variables ``apply_gradients(zip(grads, X))``
    updates, else None."""
    arg = apply.node.args[0] if isinstance(apply.node, ast.Call) and apply.node.args else None
    return dotted_name(arg.args[1]) if method(arg) == "zip" and len(arg.args) == 2 else None


def _returned_before(index, add, apply):
    """``add`` is in an ``if`` that ends in ``return`` before ``apply``:
    ``if accum_steps > 1: ... return train_op`` then the plain step."""
    for up in index.ancestors(add.node):
        if isinstance(up, ast.If) and _ends_in_return(up.body) \
                and up.lineno < apply.node.lineno \
                and not any(n is apply.node for n in nodes_in(up)):
            return True
    return False


def _ends_in_return(body):
    last = body[-1] if body else None
    while isinstance(last, ast.With) and last.body:
        last = last.body[-1]
    return isinstance(last, (ast.Return, ast.Raise))


def _aggregated(index, report, add, reported):
    """GAC104: accumulators made with ``aggregation=SUM``/``MEAN`` (and
    not ``ON_READ``): each replica-context write all-reduces."""
    if ("GAC104", add.key) in reported:
        return
    aggregation = index.memo(("aggregation", add.key), lambda: _aggregation(index, add.key))
    if aggregation and _distributed(index):
        adds = [a for a in index.accumulates if a.key == add.key]
        plain = [a for a in adds if not any(p.function is a.function
                                            for p in index.applies)] or adds
        reported.add(("GAC104", add.key))
        report(plain[-1].node, "GAC104", "`%s.assign_add` (aggregation=%s)"
               % (label(add), aggregation))


def _distributed(index):
    """The file names a ``tf.distribute`` strategy (aggregation only
    reduces across the replicas of one; a plain estimator or session
    writes the variable as it is)."""
    return index.memo("distributed", lambda: any(
        "strategy" in (dotted_name(n) or "").lower() or "distribute" in (dotted_name(n) or "")
        for n in index.nodes if isinstance(n, (ast.Name, ast.Attribute))))


def _aggregation(index, key):
    """``SUM``/``MEAN`` when ``key`` is made as a mirrored variable that
    aggregates its writes, else None."""
    for node in index.assigns:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and index.key(node.targets[0]) == key):
            continue
        words = dict((k.arg, dotted_name(k.value) or "") for n in nodes_in(node.value)
                     if isinstance(n, ast.Call) for k in n.keywords)
        if words.get("aggregation", "").endswith(("SUM", "MEAN")) \
                and not words.get("synchronization", "").endswith("ON_READ"):
            return words["aggregation"].split(".")[-1]
    return None


def _horovod_optimizers(index):
    """Names bound to ``hvd.DistributedOptimizer(...)`` without
    ``backward_passes_per_step`` (which accumulates itself), and not only
    on the path that does not accumulate (``if accum_steps == 1:``)."""
    found = {}
    for node in index.assigns:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and method(node.value) == "DistributedOptimizer" and not any(
                    k.arg == "backward_passes_per_step" for k in node.value.keywords) \
                and not single_step_path(index, node):
            found.update((dotted_name(t), node) for t in node.targets)
    return found


def single_step_path(index, node):
    """``node`` runs only where nothing accumulates: in ``if accum_steps ==
    1:``, or in the ``else`` of ``if accum_steps > 1:``."""
    child = node
    for up in index.ancestors(node):
        if isinstance(up, ast.If):
            in_body = any(child is n for n in up.body)
            if (in_body and no_accumulation(up.test)) or (
                    not in_body and any(child is n for n in up.orelse)
                    and accumulation(up.test)):
                return True
        child = up
    return False


def _reduce(index, report, add, reported):
    _aggregated(index, report, add, reported)
    # (the step that accumulates, and the functions its gradients come from:
    # ``loss, grads = train_step(x)`` under ``hvd.DistributedGradientTape``)
    scopes = [index.step_scope(add.node)]
    for expr in index.sources(add.value, add.value)[1]:
        for where in [index.step_scope(expr)] + _replica_functions(index, expr):
            # (and an optimizer's apply_gradients around the closure: it runs
            # every micro-step, with what it reduces at its top)
            outer = index.function_of(where) if where is not None else None
            for scope in (where, outer if getattr(outer, "name", None) == "apply_gradients"
                          else None):
                if scope is not None and all(scope is not s for s in scopes):
                    scopes.append(scope)
    for scope in scopes:
        for node, what in index.memo(("reductions", id(scope), add.key),
                                     lambda: _reductions(index, scope, add.key)):
            if ("GAC104", node.lineno) not in reported:
                reported.add(("GAC104", node.lineno))
                report(node, "GAC104", what)


def _replica_functions(index, expr):
    """The methods ``strategy.run(fn, ...)`` in ``expr`` runs, where ``fn``
    is ``self.step_fn`` or a name (a parameter too) bound to one of them,
    through ``a if use_cache else b``."""
    found, todo, seen = [], [n.args[0] for n in nodes_in(expr) if isinstance(n, ast.Call)
                             and method(n) in RUNS and n.args], set()
    while todo and len(seen) < 64:
        fn = todo.pop()
        seen.add(id(fn))
        if isinstance(fn, ast.IfExp):
            todo += [fn.body, fn.orelse]
        elif isinstance(fn, ast.Name):
            todo += [v for v, _ in index.values_of(fn.id, fn) if id(v) not in seen]
        elif isinstance(fn, ast.Attribute) and dotted_name(fn.value) == "self":
            found += [f for f in getattr(index.class_of(fn), "body", [])
                      if getattr(f, "name", None) == fn.attr and isinstance(f, ast.FunctionDef)]
    return found


def _adds_without_apply(index, scope):
    """``scope`` (a TF1 op builder) adds gradients to sums and applies none."""
    return scope is not None and any(a.function is scope for a in index.accumulates) \
        and not any(a.function is scope for a in index.applies) \
        and not any(method(n) in ("apply_gradients", "minimize") for n in nodes_in(scope))


def _cycle_guarded(index, node):
    """Under a condition in its own function (``if take_step:``, the plain
    path's ``else:``; one of its two nearest, not a test of how the job
    runs), a ``tf.cond`` branch, or a caller's test that may decide a
    cycle (a ``tf.cond``, a ``%``); not under a caller's that picks a path
    (``if strategy.num_replicas_in_sync > 1``)."""
    guards = index.guards(node)
    return any(kind == "cond" or reads_modulo(test) for kind, test in guards) or any(
        kind == "if" and not _picks_setup(test) for kind, test in guards[:2]
        if index.function_of(test) is index.function_of(node))


def _picks_setup(test):
    """A test of how the job runs (``hvd.is_initialized()``,
    ``strategy.num_replicas_in_sync > 1``) or of a value's type
    (``isinstance(g, tf.IndexedSlices)``, ``g is None``), no cycle's."""
    return any("hvd." in (dotted_name(n) or "") or "aggregat" in (dotted_name(n) or "")
               or (dotted_name(n) or "").endswith(
                   ("is_initialized", "num_replicas_in_sync", "size", "isinstance"))
               for n in nodes_in(test)) or (  # (``if not skip_gradients_aggregation:``)
        isinstance(test, ast.Compare) and all(isinstance(o, (ast.Is, ast.IsNot)) for o in test.ops))


def _strategy_reduce(node):
    """``strategy.reduce(tf.distribute.ReduceOp.SUM, grads, axis=None)``."""
    return method(node) == "reduce" and isinstance(node.func, ast.Attribute) and (
        (dotted_name(node.func.value) or "").lower().endswith("strategy")
        or any("ReduceOp" in (dotted_name(a) or "") for a in node.args[:1]))


def _barrier(node):
    """A reduction of values made on the spot, that read nothing of the
    program (``hvd.allreduce(tf.random_normal([1]))``, ``tf.constant(0)``):
    a barrier that syncs the workers, no gradient."""
    return bool(node.args) and all(
        (dotted_name(n) or "").split(".")[0] in ("tf", "np", "numpy", "hvd")
        for a in node.args for n in loads(a))


def _reductions(index, scope, key):
    """``[(node, what)]``: the unconditional reductions of gradients in
    ``scope`` (not of a loss, nor of the sums ``key``), Horovod's tape, and
    compute_gradients of a ``hvd.DistributedOptimizer``."""
    horovod = index.memo("horovod optimizers", lambda: _horovod_optimizers(index))
    found = []
    for node in index.statements_of(scope):
        if not isinstance(node, ast.Call):
            continue
        name = dotted_name(node.func) or ""
        if (method(node) in _REDUCES or _strategy_reduce(node)) and "." in name \
                and not _cycle_guarded(index, node):
            words = " ".join(dotted_name(n) or string_of(n) or "" for a in node.args
                             for n in nodes_in(a))  # (``results["loss"]`` is a loss too)
            if "loss" not in words.lower() and not _barrier(node) and (not any(
                    key in index.sources(a, node)[0] for a in node.args)
                    or _adds_without_apply(index, scope)):
                # (a reduction of the sums runs once per cycle; not in an op
                # that adds a micro-batch and applies nothing)
                found.append((node, "`%s`" % name))
        elif method(node) == "DistributedGradientTape":
            found.append((node, "`%s`" % name))
        elif method(node) == "compute_gradients" and isinstance(node.func, ast.Attribute) \
                and dotted_name(node.func.value) in horovod \
                and not single_step_path(index, node):
            # (said at the wrap, where the fix goes: backward_passes_per_step=N)
            found.append((horovod[dotted_name(node.func.value)],
                          "`%s` (of the hvd.DistributedOptimizer made here)" % name))
    found.sort(key=lambda pair: (pair[0].lineno, pair[0].col_offset))
    statements = [index.statement_of(n) for n, _ in found]
    # (one per statement: ``allreduce(s) if sparse else allreduce(s)`` is one)
    return [f for i, f in enumerate(found) if statements[i] not in statements[:i]]
