"""``lint``'s checks of hand-rolled accumulation, decided on the file's
dataflow (``flow.Index``): each accumulator that an apply consumes, however
far apart the two are (another method, a ``tf.cond`` branch, a lambda, a
nested def, a ``tf.function`` step called from a Python loop).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint import flow, micro_steps
from gradacc_compat.lint.ast_helpers import FUNCTIONS, dotted_name, method
from gradacc_compat.lint.exprs import (GRADIENT_CALLS, any_increment, counter_name,
                                       divides_by_n, increment, is_division, is_scaling, number)
from gradacc_compat.lint.micro_steps import label

__all__ = ["check"]

#: Calls that run a function handed to them, once per replica.
_RUNS = ("run", "experimental_run_v2", "call_for_each_replica")
_STRATEGY_WORDS = ("MirroredStrategy", "TPUStrategy", "MultiWorkerMirroredStrategy",
                   "experimental_run_v2", "call_for_each_replica", "train_distribute",
                   "CollectiveAllReduceStrategy")


class _Checks(object):
    """The accumulators an apply consumes: how they are divided (GAC101,
    GAC108) and when the apply runs (GAC102, GAC109, GAC111); the rest
    in ``micro_steps``."""

    def __init__(self, index, report, text):
        self.index = index
        self.report = report
        self.distributed = any(word in text for word in _STRATEGY_WORDS)

    def run(self):
        index = self.index
        reported = set()
        micro_steps.check_module(index, self.report)
        checked = set()
        for apply in index.applies:
            keys = apply.keys & index.accumulators
            if not keys:
                continue
            adds = [a for a in index.accumulates if a.key in keys]
            self._division(apply, keys, adds)
            self._schedule(apply, adds)
            self._dropped_cycle(apply, keys, adds, reported)
            checked.update(id(a) for a in adds)
        for add in index.accumulates:
            if id(add) in checked or self._of_gradients(add):
                micro_steps.check_accumulate(index, self.report, add, reported)

    def _of_gradients(self, add):
        """Whether what ``add`` accumulates comes from a gradient call."""
        return any(isinstance(n, ast.Call) and method(n) in GRADIENT_CALLS
                   for e in self.index.sources(add.value, add.node)[1] for n in ast.walk(e))

    # -- GAC101 / GAC108: dividing by N ------------------------------------
    def _division(self, apply, keys, adds):
        index = self.index
        at_apply = any(is_division(e) for e in apply.chain)
        at_add = any(index.memo(("divides", id(a)), lambda a=a: any(
            is_division(e) for e in index.sources(a.value, a.node)[1])
            or self._divided_before(a)) for a in adds)
        in_place = self._normalized_in_place(keys)
        loss = any(self._loss_scaled(a) for a in adds)
        name = label(adds[0])
        if not (at_apply or at_add or in_place or loss):
            self.report(apply.node, "GAC101", name)
        elif loss and any(self._loss_scaled(a, by_n=True) for a in adds) and (
                any(divides_by_n(e) for e in apply.chain) or self._normalized_in_place(
                    keys, by_n=True)):
            self.report(apply.node, "GAC108", name)

    def _divided_before(self, add):
        """``grad /= N`` on the name ``add`` adds, earlier in its function."""
        names = set(n.id for n in ast.walk(add.value) if isinstance(n, ast.Name))
        return any(isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Div)
                   and isinstance(n.target, ast.Name) and n.target.id in names
                   and n.lineno < add.node.lineno
                   for n in self.index.statements_of(add.function))

    def _normalized_in_place(self, keys, by_n=False):
        return self.index.memo(("in place", frozenset(keys), by_n),
                               lambda: self._find_normalized(keys, by_n))

    def _find_normalized(self, keys, by_n):
        index = self.index
        divides = divides_by_n if by_n else is_division
        for node in index.assigns + index.calls:
            if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Div, ast.Mult)) \
                    and index.key(node.target) in keys \
                    and (isinstance(node.op, ast.Div) or divides(node.value)):
                return True
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and index.key(node.targets[0]) in keys and divides(node.value):
                return True
            if isinstance(node, ast.Call) and method(node) in ("assign", "update") and node.args:
                if isinstance(node.func, ast.Attribute) and method(node) == "assign" \
                        and dotted_name(node.func) not in ("tf.assign", "tf.compat.v1.assign"):
                    owner, value = node.func.value, node.args[0]
                elif len(node.args) > 1:
                    owner, value = node.args[0], node.args[1]
                else:
                    continue
                if index.key(owner) in keys and divides(value):
                    return True
        return False

    def _loss_scaled(self, add, by_n=False):
        """The loss divided before the gradients are taken: anywhere in the
        accumulating method's class, or the module for functions."""
        index = self.index
        scope = index.class_of(add.function) if add.function is not None else None
        return index.memo(("loss", id(scope), by_n), lambda: self._scaled_in(scope, by_n))

    def _scaled_in(self, scope, by_n):
        index = self.index
        for node in ast.walk(scope if scope is not None else index.tree):
            scaled = divides_by_n if by_n else is_scaling
            if isinstance(node, ast.Assign) and scaled(node.value) and any(
                    "loss" in (dotted_name(t) or "").lower() for t in node.targets):
                return True
            if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div) \
                    and "loss" in (dotted_name(node.target) or "").lower():
                return True
            if isinstance(node, ast.Call) and method(node) in GRADIENT_CALLS and node.args \
                    and any(scaled(e) for e in index.sources(node.args[0], node)[1]):
                return True  # (the loss under any name: what the gradient call reads)
            if isinstance(node, ast.Call) and method(node) == "compute_average_loss":
                for kw in node.keywords:
                    if kw.arg == "global_batch_size" and any(
                            isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)
                            for n in ast.walk(kw.value)):
                        return True
        return False

    # -- GAC102 / GAC109 / GAC111: when the apply runs -----------------------
    def _schedule(self, apply, adds):
        index = self.index
        guards = index.guards(apply.node)
        if not guards:
            if not self._runs_now(apply):
                return  # a TF1 graph op, run when the session runs it
            loop = index.loop_of(apply.node)
            together = [a for a in adds if a.function is apply.function and (
                (loop is None and index.loop_of(a.node) is None)
                or (loop is not None and any(up is loop for up in index.ancestors(a.node))))]
            together = together or [a for a in adds if self._called_before(apply, a)]
            if together:
                self.report(apply.node, "GAC102", label(together[0]))
            return
        for kind, test in guards:
            why = self._irregular(test, apply)
            if why:
                sites = [] if index.function_of(test) is apply.function else \
                    self._guarded_calls(apply)
                for call, reason in sites or [(apply.node, why)]:
                    self.report(call, "GAC109", reason)
                break
        conds = [test for kind, test in guards if kind == "cond"]
        if conds and self.distributed:
            call = index.parents.get(conds[0])
            self.report(call if isinstance(call, ast.Call) else apply.node, "GAC111",
                        dotted_name(apply.node.func) or "apply_gradients")

    def _called_before(self, apply, add):
        """The function that applies calls the one that accumulates (``add``)
        before the apply, once per call: unguarded and, unless the apply
        is in the same loop, outside a loop (a Keras ``train_step`` that
        accumulates through a helper method, then applies)."""
        index = self.index
        if add.function is None or add.function is apply.function:
            return False
        loop = index.loop_of(apply.node)
        for call in index.callers(add.function):
            if index.function_of(call) is not apply.function \
                    or call.lineno >= apply.node.lineno or index.locally_guarded(call):
                continue
            around = index.loop_of(call)
            if around is None or around is loop:
                return True
        return False

    def _guarded_calls(self, apply):
        """``[(call, why)]``: the calls of the function that holds ``apply``
        (direct, or handed to ``strategy.run``) whose own conditions apply
        at irregular points: each is a place to fix."""
        index = self.index
        function = apply.function
        name = getattr(function, "name", None)
        calls = list(index.callers(function)) + [
            n for n in index.calls if name and n.args and isinstance(n.args[0], ast.Name)
            and n.args[0].id == name and method(n) in _RUNS]
        found = []
        for call in calls:
            here = flow.Apply(call, index.function_of(call), apply.keys, apply.chain)
            for kind, test in index.guards(call):
                why = self._irregular(test, here)
                if why:
                    found.append((call, why))
                    break
        return found

    def _dropped_cycle(self, apply, keys, adds, reported):
        """GAC110: local sums applied only inside the loop that fills them,
        nothing after it: what the last partial cycle holds is lost when the
        function returns (or the next epoch makes the sums anew)."""
        index = self.index
        loop = index.loop_of(apply.node)
        function = apply.function
        if loop is None or isinstance(function, (type(None), ast.Lambda)) \
                or not index.guards(apply.node) or ("GAC110", loop.lineno) in reported:
            return
        local = [k for k in keys if k[0] == "name" and k[1] == id(function)]
        if not local or not all(any(up is loop for up in index.ancestors(a.node))
                                for a in adds if a.key in local):
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

    def _runs_now(self, apply):
        """Whether the apply runs where it is written: a statement of its own
        (eager, ``tf.function``), not an op built for a session to run later
        (``train_op = opt.apply_gradients(...)`` in TF1 graph code)."""
        return isinstance(self.index.parents.get(apply.node), ast.Expr)

    def _irregular(self, test, apply):
        """Why ``test`` lets the first cycle be shorter or longer than N."""
        for node in ast.walk(test):
            if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
                for value in node.values:
                    if isinstance(value, ast.Compare) and len(value.ops) == 1 \
                            and isinstance(value.ops[0], ast.Eq) \
                            and isinstance(value.left, (ast.Name, ast.Attribute)) \
                            and number(value.comparators[0]) == 0:
                        return "`%s == 0` also applies on the first micro-batch" % (
                            dotted_name(value.left) or "the counter")
            modulo = self._modulo_of(node)
            if modulo is None:
                continue
            counter = modulo.left
            if isinstance(counter, ast.BinOp) and isinstance(counter.op, ast.Add):
                continue  # (step + 1) % N
            name = counter_name(counter)
            if name and self._starts_at_zero(name, test):
                return "`%s %% N == 0` is true at step 0, before any cycle is full" % name
            origin = self._zero_based_index(counter, apply)
            if origin:
                return origin
        return self._off_by_one(test)

    def _off_by_one(self, test):
        """``count == N`` where the count starts at 1 and is advanced before
        the test (cycles of N - 1), or starts at 0 and is advanced after it
        (N + 1)."""
        index = self.index
        for node in ast.walk(test):
            if isinstance(node, ast.Compare) and len(node.ops) == 1 \
                    and isinstance(node.ops[0], ast.Eq):
                counter, other = node.left, node.comparators[0]
            elif isinstance(node, ast.Call) and method(node) == "equal" and len(node.args) == 2:
                counter, other = node.args
            else:
                continue
            name = dotted_name(counter)
            if not name or number(other) is not None:
                continue
            start = self._initial(name)
            function = index.function_of(test)
            moves = [n for n in index.statements_of(function) if any_increment(n) == name]
            if start not in (0, 1) or not moves:
                continue
            before = any(n.lineno < test.lineno for n in moves)
            if (start == 1) == before:
                return "`%s` starts at %d and is advanced %s the test: cycles of N %s 1" % (
                    name, start, "before" if before else "after", "-" if before else "+")
        return None

    def _initial(self, name):
        for node in self.index.assigns:
            if isinstance(node, ast.Assign) and any(dotted_name(t) == name for t in node.targets):
                value = node.value
                if isinstance(value, ast.Call) and value.args:
                    value = value.args[0]
                return number(value)
        return None

    def _starts_at_zero(self, name, test):
        return self.index.memo(("zero", name, id(test)), lambda: self._from_zero(name, test))

    def _from_zero(self, name, test):
        """Whether the counter ``name`` reads 0 when ``test`` first runs: made
        as 0 (or by TF: ``get_or_create_global_step``, ``iterations``) and not
        advanced before ``test`` in the same function."""
        index = self.index
        for node in index.assigns:
            if isinstance(node, ast.Assign) and any(dotted_name(t) == name for t in node.targets) \
                    and isinstance(node.value, ast.Call):
                values = list(node.value.args[:1]) + [k.value for k in node.value.keywords
                                                      if k.arg in ("initial_value", "initializer")]
                numbers = [number(v) for v in values if number(v) is not None]
                if numbers and numbers[0] != 0:
                    return False
        function = index.function_of(test)
        for node in index.statements_of(function):
            if increment(node) == name and node.lineno < test.lineno:
                return False
        return True

    def _modulo_of(self, node):
        """``X % N`` (or ``tf.math.mod(X, N)``) compared with 0, else None."""
        compared = None
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq) \
                and number(node.comparators[0]) == 0:
            compared = node.left
        elif isinstance(node, ast.Call) and method(node) == "equal" and len(node.args) == 2 \
                and number(node.args[1]) == 0:
            compared = node.args[0]
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            compared = node.operand
        if isinstance(compared, ast.BinOp) and isinstance(compared.op, ast.Mod):
            return compared
        if isinstance(compared, ast.Call) and method(compared) in ("mod", "floormod") \
                and len(compared.args) == 2:
            return ast.BinOp(left=compared.args[0], op=ast.Mod(), right=compared.args[1])
        return None

    def _zero_based_index(self, counter, apply):
        """``i`` from ``enumerate(...)``/``range(n)`` (0 first), tested
        before the micro-batch it counts is done."""
        if not isinstance(counter, ast.Name):
            return None
        for up in self.index.ancestors(apply.node):
            if isinstance(up, ast.For):
                source = up.iter
                names = set(n.id for n in ast.walk(up.target) if isinstance(n, ast.Name))
                if counter.id not in names or not isinstance(source, ast.Call):
                    continue
                starts = method(source) == "enumerate" and len(source.args) == 1 and not any(
                    k.arg == "start" for k in source.keywords)
                starts = starts or (method(source) in ("range", "xrange")
                                    and len(source.args) == 1)
                if starts and not self._applies_first(counter, apply, up):
                    return ("`%s %% N == 0` with `%s` counting from 0: the first cycle is "
                            "%s" % (counter.id, counter.id, "one micro-batch"))
            if isinstance(up, FUNCTIONS):
                break
        return self._counted_after(counter, apply)

    def _applies_first(self, counter, apply, loop):
        """The apply comes before the loop's accumulation, skipped at the
        first micro-batch (``if i > 0``): it applies the previous N."""
        index = self.index
        adds = [a for a in index.accumulates if a.key in apply.keys
                and any(up is loop for up in index.ancestors(a.node))]
        if not adds or any(a.node.lineno < apply.node.lineno for a in adds):
            return False
        for kind, test in index.guards(apply.node):
            for node in ast.walk(test):
                if isinstance(node, ast.Compare) and dotted_name(node.left) == counter.id \
                        and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Gt, ast.NotEq)) \
                        and number(node.comparators[0]) == 0:
                    return True
        return False

    def _counted_after(self, counter, apply):
        """A Python counter made 0 and advanced after the ``% N`` test in the
        loop around the apply: the test sees 0 on the first micro-batch."""
        index = self.index
        loop = index.loop_of(apply.node)
        if loop is None:
            return None
        assigned = index.assignments(index.binder(counter.id, apply.node))
        starts = [number(value) for value, node in assigned.get(counter.id, ())
                  if not any(up is loop for up in index.ancestors(node))]
        if starts != [0]:
            return None
        moves = [n for n in index.statements_of(index.function_of(apply.node))
                 if any_increment(n) == counter.id and any(up is loop for up in index.ancestors(n))]
        if moves and all(n.lineno > apply.node.lineno for n in moves):
            return ("`%s %% N == 0` with `%s` made 0 and advanced after the test: the first "
                    "cycle is one micro-batch" % (counter.id, counter.id))
        return None

def check(index, report, text=""):
    """Runs the hand-rolled checks on a module's ``flow.Index``."""
    _Checks(index, report, text).run()
