"""``lint``'s checks of hand-rolled accumulation, decided on the file's
dataflow (``flow.Index``): each accumulator that an apply consumes, however
far apart the two are (another method, a ``tf.cond`` branch, a lambda, a
nested def, a ``tf.function`` step called from a Python loop).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint import (applies_counted, divisions, exhausted, flow, gates, losses,
                                 masked, micro_steps, parameters, plain_steps, replicas,
                                 schedule, session_runs)
from gradacc_compat.lint.accumulates import label
from gradacc_compat.lint.ast_helpers import NUMBER, dotted_name, method, nodes_in, parameter_names
from gradacc_compat.lint.exprs import (GRADIENT_CALLS, accumulation, divides_by_n, n_names,
                                       names_n, no_accumulation, reads_modulo)

__all__ = ["check"]

_STRATEGY_WORDS = ("MirroredStrategy", "TPUStrategy", "MultiWorkerMirroredStrategy",
                   "experimental_run_v2", "call_for_each_replica", "train_distribute",
                   "CollectiveAllReduceStrategy", "strategy.run(")


class _Checks(object):
    """The accumulators an apply consumes: how they are divided (GAC101,
    GAC108) and when the apply runs (GAC102, GAC109, GAC111); the rest
    in ``micro_steps``."""

    def __init__(self, index, report, text):
        self.index = index
        self.report = report
        self.distributed = any(word in text for word in _STRATEGY_WORDS)
        self.irregular = schedule.Irregular(index)
        self.undivided = {}  # (sums, function): the first apply of them undivided

    def run(self):
        index = self.index
        reported = set()
        micro_steps.check_module(index, self.report)
        checked = set()
        # (an apply inside a helper that another apply calls -- ``def
        # _apply_gradients(pairs): return opt.apply_gradients(pairs)`` -- is
        # decided at the call, where the sums are handed over; not when the
        # helper reads sums of its own, ``self.accumulator.gradients``)
        helpers = set(id(f) for f in (index.callee(a.node) for a in index.applies) if f is not None)
        for apply in index.applies:
            keys = apply.keys & index.accumulators
            handed = id(apply.function) in helpers and _reads_parameter(apply)
            adds = [a for a in index.accumulates if a.key in keys]
            if not keys or handed or micro_steps.single_step_path(index, apply.node) \
                    or plain_steps.plain_step(index, apply, adds):
                continue  # (``else:`` of ``if accum_steps > 1``: the plain step)
            if self._in_variables_loop(apply, adds):
                continue
            if plain_steps.cycle_of_one(index, apply) is None:
                self._division(apply, keys, adds)
            self._schedule(apply, adds)
            self._dropped_cycle(apply, keys, adds, reported)
            checked.update(id(a) for a in adds)
        for add in index.accumulates:
            if id(add) in checked or parameters.differentiated(index, add.value):
                micro_steps.check_accumulate(index, self.report, add, reported)
        for node, name in self.undivided.values():
            self.report(node, "GAC101", name)

    # -- GAC101 / GAC108: dividing by N ------------------------------------
    def _division(self, apply, keys, adds):
        index = self.index
        at_apply = all(divisions.on_every_path(index, value, run) for value, run in apply.fed) \
            if apply.fed else divisions.on_every_path(index, apply.chain[0], apply.node)
        at_add = any(divisions.divided_at_add(index, a) for a in adds)
        in_place = divisions.normalized_in_place(index, keys | apply.keys)
        loss = any(losses.scaled(index, a) for a in adds)
        name = label(adds[0])
        if not (at_apply or at_add or in_place or loss or all(
                losses.summed(index, a) for a in adds) or divisions.lr_compensated(index)
                or divisions.in_update_hook(index, apply)):
            # (one finding per function for the same sums: the flush after
            # the loop that applies them undivided again is the same bug; a
            # script's top level may make them anew, each apply counts there)
            site = (frozenset(keys), id(apply.function if apply.function is not None
                                        else apply.node))
            first = self.undivided.get(site)
            at = apply.fed[0][1] if apply.fed else apply.node  # (the run that feeds the sums)
            if first is None or at.lineno < first[0].lineno:
                self.undivided[site] = (at, name)
        elif loss and any(losses.scaled(index, a, by_n=True) for a in adds) and (
                any(divides_by_n(e, n_names(index)) for e in apply.chain) or
                divisions.normalized_in_place(index, keys, by_n=True)):
            self.report(apply.node, "GAC108", name, "the loss was already divided")

    # -- GAC102 / GAC109 / GAC111: when the apply runs -----------------------
    def _schedule(self, apply, adds):
        index = self.index
        # (``if accum_steps == 1: plain step else: accumulating step`` picks
        # a path, it is no cycle's condition)
        guards = [(kind, test) for kind, test in index.guards(apply.node) if not (
            no_accumulation(test) or accumulation(test) or gates.always_true(index, test))]
        if self._one_per_apply(apply, adds):
            self.report(apply.node, "GAC102", label(adds[0]), "")
            for _, test in guards:  # (and a gate that reads its own test backwards)
                why = gates.misread(index, test, adds)
                if why:
                    self.report(test, "GAC109", why)
            return
        loop = index.loop_of(apply.node)
        if loop is not None and adds and any(reads_modulo(t) for _, t in guards) and all(
                self._same_pass(a, loop) and index.made_each_pass(loop, a.key, a.node)
                for a in adds):
            self.report(apply.node, "GAC102", label(adds[0]), ": the sums are made anew on "
                        "each micro-batch, so each apply holds one")
        if not guards:
            if masked.gated_hooks(index, apply.node):
                return  # (the class's own update hook decides by tf.cond)
            if not self._runs_now(apply):
                self._session_schedule(apply, adds)  # a TF1 graph op: where it runs
                return
            loop = index.loop_of(apply.node)
            # (an add in a loop of its own inside the apply's runs N times
            # per apply: an epoch's sum applied after its loop is not this)
            together = [a for a in adds if a.function is apply.function
                        and self._same_pass(a, loop)
                        and not index.bound_in_pass(loop, a.key, a.node, a.function)]
            together = together or [a for a in adds if self._called_before(apply, a)]
            calls = [] if together else self._applier_called_each_pass(apply, adds)
            if calls:
                self.report(calls[0], "GAC102", label(adds[0]), "")
                return
            if together:
                self.report(apply.node, "GAC102", label(together[0]), "")
            return
        for kind, test in guards:
            passed = self.irregular.passed(test, apply)
            for node, reason in passed:
                self.report(node, "GAC109", reason)
            if passed:
                continue
            # (a test in a function that calls the apply's is read where that
            # call is: ``for i, _ in enumerate(...)`` around ``if i % N == 0``)
            why = gates.misread(index, test, adds) or applies_counted.waits_on_itself(
                index, test, apply) or self.irregular.why(test, apply)
            sites = [] if index.function_of(test) is apply.function else \
                self.irregular.sites(apply)
            if why or sites:
                for node, reason in sites or [(test, why)]:
                    self.report(node, "GAC109", reason)
                break
        conds = [test for kind, test in guards if kind == "cond"]
        conds = [c for c in conds if not replicas.in_cross_replica(index, c)]
        if conds and self.distributed and not replicas.built_outside_strategy(index, apply.node):
            call = index.parents.get(conds[0])
            self.report(call if isinstance(call, ast.Call) else apply.node, "GAC111",
                        dotted_name(apply.node.func) or "apply_gradients")

    def _session_schedule(self, apply, adds):
        """The apply op run by the session in the loop that runs the
        accumulation, unguarded (GAC102), or under a test that applies at
        irregular points (GAC109)."""
        index = self.index
        accum_runs = [r for a in adds for r in session_runs.runs_of(index, a.node)]
        for run in session_runs.runs_of(index, apply.node):
            tests = [test for kind, test in index.guards(run)
                     if not (no_accumulation(test) or accumulation(test))]
            loop = index.loop_of(run)
            if not tests and loop is not None and any(
                    index.loop_of(r) is loop and r.lineno <= run.lineno for r in accum_runs):
                self.report(run, "GAC102", label(adds[0]), "")
            here = flow.Apply(run, index.function_of(run), apply.keys, apply.chain)
            why = next((w for w in (gates.misread(index, t, adds) or self.irregular.why(t, here)
                                    for t in tests) if w), None)
            if why:
                self.report(run, "GAC109", why)

    def _applier_called_each_pass(self, apply, adds):
        """The calls of the applying function, unguarded, in the loop that
        accumulates, after the add (an apply helper indented into the loop
        over micro-batches: ``grads = merge(grads, g); self.apply_grads(grads)``)."""
        index = self.index
        found = []
        for add in adds:
            loop = index.loop_of(add.node)
            if loop is None or add.function is apply.function:
                continue
            found += [c for c in index.callers(apply.function)
                      if index.function_of(c) is add.function and index.loop_of(c) is loop
                      and c.lineno > add.node.lineno and not index.locally_guarded(c)]
        return found

    def _in_variables_loop(self, apply, adds):
        """GAC102: an apply run in the loop over the variables that adds to
        their sums runs once per variable, on sums half filled."""
        loop = self.index.loop_of(apply.node)
        if loop is None or not self._runs_now(apply) or not _over_variables(loop) or all(
                self.index.loop_of(a.node) is not loop for a in adds):
            return False
        self.report(apply.node, "GAC102", label(adds[0]), ": the apply sits in the loop over "
                    "the variables that adds to the sums, so it runs once per variable")
        return True

    def _same_pass(self, add, loop):
        """Whether ``add`` runs once per pass of ``loop`` (None: the
        function): the loops between them only walk the variables
        (``for i, g in enumerate(grads)``, ``range(len(accum))``)."""
        index = self.index
        current = index.loop_of(add.node)
        while current is not loop:
            if current is None or not _over_variables(current):
                return False
            current = index.loop_of(current)
        return True

    def _called_before(self, apply, add):
        """The function that applies calls the one that accumulates (``add``)
        before the apply, once per call: unguarded and, unless the apply
        is in the same loop, outside a loop (a Keras ``train_step`` that
        accumulates through a helper method, then applies)."""
        index = self.index
        if add.function is None or add.function is apply.function or (
                add.key[0] == "name" and add.key[1] == id(add.function)
                and add.key[2] not in parameter_names(add.function)):
            return False  # (a helper's own sums, made anew each call: one batch's sum)
        if not self._same_pass(add, None):
            return False  # (the helper loops over micro-batches: a call adds several)
        loop = index.loop_of(apply.node)
        for call in index.callers(add.function):
            if index.function_of(call) is not apply.function \
                    or call.lineno >= apply.node.lineno or index.locally_guarded(call):
                continue
            around = index.loop_of(call)
            if around is None or around is loop:
                return True
        return False

    def _one_per_apply(self, apply, adds):
        """The branch that applies also adds the micro-batch and makes the
        sums anew after the apply, and nothing adds elsewhere: ``if ...: sums
        += g; apply(sums / N); sums = 0``, one micro-batch per apply."""
        index = self.index
        branch = next((up for up in index.ancestors(apply.node) if isinstance(up, ast.If)), None)
        if branch is None or not adds or index.function_of(branch) is not apply.function:
            return False
        inside = set(id(n) for s in branch.body for n in nodes_in(s))
        loop = index.loop_of(apply.node)  # (not N adds of a loop of their own, then the apply)
        if not all(id(a.node) in inside and a.node.lineno < apply.node.lineno
                   and self._same_pass(a, loop) for a in adds):
            return False
        return any(isinstance(n, ast.Assign) and n.lineno > apply.node.lineno
                   and any(index.key(t) == a.key for t in n.targets for a in adds)
                   for s in branch.body for n in nodes_in(s))

    def _dropped_cycle(self, apply, keys, adds, reported):
        """GAC110: local sums applied only inside the loop that fills them,
        nothing after it: what the last partial cycle holds is lost when the
        function returns (or the next epoch makes the sums anew)."""
        index = self.index
        if self._one_per_apply(apply, adds):
            return
        loop = index.loop_of(apply.node)
        function = apply.function
        tests = [t for _, t in index.guards(apply.node)
                 if not isinstance(t, NUMBER + (getattr(ast, "NameConstant", ast.Num),))
                 and getattr(t, "id", None) not in ("True", "False")  # (Python 2)
                 and loop is not None and any(up is loop for up in index.ancestors(t))]
        if loop is None or isinstance(function, (type(None), ast.Lambda)) or not tests \
                or ("GAC110", loop.lineno) in reported or index.loop_of(loop) is not None \
                or exhausted.endless(index, loop) or isinstance(loop, ast.While):
            return  # (``while True:`` is no condition; a loop in a loop: ``epochs``; a
            # ``while`` loop makes its data as it goes (episodes): no example is left out)
        local = sorted(k for k in keys if k[0] == "name" and k[1] == id(function))
        if local and not all(self._same_pass(a, loop) or any(
                index.loop_of(call) is loop for call in index.callers(a.function))
                for a in adds if a.key in local):
            return  # (summed in a loop of their own: an epoch's flush after it)
        local = local or sorted(k for k in apply.keys if k[0] == "name" and k[1] == id(function)
                                and self._summed_by_call(k[2], function, loop))
        if not local:
            return
        applies = [a for a in index.applies if set(local) & a.keys]
        returned = any(isinstance(n, ast.Return) and n.value is not None
                       and set(local) & index.keys_in(n.value)
                       for n in index.statements_of(function))
        if returned or any(not any(up is loop for up in index.ancestors(a.node))
                           for a in applies):
            return
        reported.add(("GAC110", loop.lineno))
        self.report(loop, "GAC110", local[0][2], "lost when `%s` returns" % function.name)

    def _summed_by_call(self, name, function, loop):
        """``sums = step(x, sums)`` in ``loop``: a function of the file that
        accumulates returns the new sums in ``name``."""
        index = self.index
        for node in index.statements_of(function):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and any(up is loop for up in index.ancestors(node)) \
                    and name in set(n.id for t in node.targets for n in nodes_in(t)
                                    if isinstance(n, ast.Name)):
                callee = index.callee(node.value)
                if callee is not None and any(a.function is callee for a in index.accumulates):
                    return True
        return False

    def _runs_now(self, apply):
        """The apply is a statement of its own (eager, ``tf.function``), no
        op built for a session (``train_op = opt.apply_gradients(...)``)."""
        return isinstance(self.index.parents.get(apply.node), ast.Expr)


_PER_VARIABLE = ("grad", "accum", "var", "weight", "param", "slot", "sum")


def _reads_parameter(apply):
    """The apply's gradients name a parameter of its function (the caller's)."""
    function = apply.function
    if function is None or not apply.node.args and not apply.node.keywords:
        return False
    params = set(parameter_names(function)) - set(["self"])
    arg = apply.node.args[0] if apply.node.args else apply.node.keywords[0].value
    return any(isinstance(n, ast.Name) and n.id in params for n in nodes_in(arg))


def _over_variables(loop):
    """A loop over the model's variables or their gradients (one pass per
    variable), not over micro-batches."""
    source = getattr(loop, "iter", None)
    if source is None or any(method(n) in GRADIENT_CALLS for s in loop.body for n in nodes_in(s)):
        return False  # (a loop that differentiates in its body walks micro-batches)
    if any(isinstance(n, ast.Call) and method(n) == "len" for n in nodes_in(source)):
        return True
    if method(source) in ("range", "xrange") and any(names_n(a) for a in source.args):
        return False  # (``range(1, self.accumulation_steps)``: the micro-batches)
    words = " ".join(dotted_name(n) or "" for n in nodes_in(source)).lower()
    return any(w in words for w in _PER_VARIABLE)


def check(index, report, text=""):
    """Runs the hand-rolled checks on a module's ``flow.Index``."""
    _Checks(index, report, text).run()
