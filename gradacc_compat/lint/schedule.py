"""``lint``'s GAC109: a condition that applies at irregular points -- an
extra apply at the first micro-batch (``i == 0 or ...``, ``step % N == 0``
with ``step`` from 0), cycles of N - 1 or N + 1 (a counter started at 1 and
advanced before the test, or at 0 and after it) -- found on the file's
dataflow (``flow.Index``), at the apply or at each call that decides it.
Standard library only: ``lint`` runs without TensorFlow."""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint import apart, counters, flow
from gradacc_compat.lint.ast_helpers import (FUNCTIONS, dotted_name, method, nodes_in,
                                             parameter_names)
from gradacc_compat.lint.exprs import (any_increment, compared_to_zero, counter_name,
                                       first_value, increment, number, reads_modulo)
from gradacc_compat.lint.flags import BARE_CALL, switched_off
from gradacc_compat.lint.outside import outside_calls
from gradacc_compat.lint.plain_steps import skips_zero

__all__ = ["Irregular"]


class Irregular(object):
    """Why a guard of an apply lets a cycle be shorter or longer than N."""

    def __init__(self, index):
        self.index = index

    def sites(self, apply):
        """``[(node, why)]``: where the calls that lead to ``apply`` are
        decided at irregular points -- each condition's statement, through
        the calls of the function that applies (direct, or handed to
        ``strategy.run``) and of the functions that call it (three hops):
        each is a place to fix (one closure called from four loops: four)."""
        index = self.index
        found, seen, todo = [], set(), [(apply.function, apply.node, 0)]
        while todo:
            function, node, hops = todo.pop(0)
            if function is None or id(function) in seen or hops > 2:
                continue
            seen.add(id(function))
            for call in self._calls_of(function):
                if switched_off(index.ancestors, node, function, BARE_CALL if index.branch_call(
                        function) is call else call):
                    continue  # (``_accumulate(apply=False)``: that call applies nothing)
                here = flow.Apply(call, index.function_of(call), apply.keys, apply.chain)
                tests = self._local_tests(call)
                predicate = call.args[0] if call.args else next(
                    (k.value for k in call.keywords if k.arg == "pred"), None)
                if index.branch_call(function) is call and predicate is not None:
                    tests.insert(0, predicate)  # tf.cond(pred, apply_fn, ...)
                for test in tests:
                    why = self.why(test, here)
                    if why:
                        statement = index.parents.get(test)
                        found.append((statement if isinstance(statement, ast.stmt) else call,
                                      why))
                        break
                # (``if loss_scaler:`` decides no cycle: the caller's tests may)
                if not any(self._decides_cycle(t, call) for t in tests):
                    todo.append((index.function_of(call), call, hops + 1))
        return found

    def _decides_cycle(self, test, at):
        """A test that compares or takes a modulo (or a name bound to one)."""
        tests = [test] + ([v for v, _ in self.index.values_of(test.id, at)]
                          if isinstance(test, ast.Name) else [])
        return any(reads_modulo(t) or any(isinstance(n, ast.Compare) or method(n) in (
            "equal", "less", "greater", "greater_equal", "less_equal") for n in nodes_in(t))
            for t in tests)

    def passed(self, test, apply):
        """``[(node, why)]`` where ``test`` reads a parameter of the function
        that applies (``if first_step or take_step:``) and a call of it
        passes a condition that applies at irregular points
        (``take_step=local_step % N == 0``)."""
        index = self.index
        function = index.function_of(test)
        if function is None or isinstance(function, ast.Lambda):
            return []
        params = parameter_names(function)
        read = [n.id for n in nodes_in(test) if isinstance(n, ast.Name) and n.id in params]
        found = []
        for name in read:
            position = params.index(name) - (1 if params[0] == "self" else 0)
            for call in index.callers(function):
                values = [k.value for k in call.keywords if k.arg == name]
                if not values and 0 <= position < len(call.args):
                    values = [call.args[position]]
                here = flow.Apply(call, index.function_of(call), apply.keys, apply.chain)
                for value in values:
                    if isinstance(value, ast.Name):  # (take_step = first or i % N == 0)
                        bound = index.values_of(value.id, call)
                        value = bound[0][0] if len(bound) == 1 and isinstance(
                            bound[0][1], ast.Assign) else value
                    why = self.why(value, here)
                    if why:
                        found.append((value, why))
        return found

    def _calls_of(self, function):
        index = self.index
        calls = index.callers(function) + index.handed_to(function) + outside_calls(index, function)
        cond = index.branch_call(function)
        return calls + [cond] if cond is not None and all(c is not cond for c in calls) else calls

    def _local_tests(self, node):
        """The ``if``/``while`` tests around ``node`` in its own function."""
        tests, child = [], node
        for up in self.index.ancestors(node):
            if isinstance(up, FUNCTIONS):
                break
            if isinstance(up, (ast.If, ast.IfExp, ast.While)) and child is not up.test:
                tests.append(up.test)
            child = up
        return tests

    def why(self, test, apply):
        """Why ``test`` lets the first cycle be shorter or longer than N."""
        decided, why = apart.branch_without_add(self.index, test, apply)
        if decided:
            return why
        first = apart.first_step_elsewhere(self.index, test, apply) or \
            apart.reset_before(self.index, test, apply)
        if first:
            return first
        looping = isinstance(self.index.parents.get(test), ast.While)
        # (``pred = tf.equal(global_step % N, 0)`` then ``tf.cond(pred, ...)``:
        # the test is what its name is bound to)
        bound = [v for v, _ in self.index.values_of(test.id, test)] \
            if isinstance(test, ast.Name) else []
        for node in list(nodes_in(test)) + [n for v in bound[:1] if len(bound) == 1
                                            for n in nodes_in(v)]:
            # (``while n < steps or steps == 0`` runs the loop; it applies nothing)
            if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and not looping:
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
            name = counter_name(counter) or (getattr(counter, "id", None) if counters.graph_step(
                self.index, getattr(counter, "id", "."), test) else None)
            if name and self._starts_at_zero(name, test):
                return "`%s %% N == 0` is true at step 0, before any cycle is full" % name
            origin = self._zero_based_index(counter, apply) or \
                self._advanced_after_in_step(counter, test, apply)
            if origin:
                return origin
        return self._off_by_one(test)

    def _off_by_one(self, test):
        """``count == N`` (or ``>=``) where the count starts at 1 and is
        advanced before the test (cycles of N - 1), or starts at 0 and is
        advanced after it (N + 1); ``count > N`` from 0 advanced before it
        (N + 1). The advance may be in the function that calls the test's."""
        for node in nodes_in(test):
            last = self._last_of_cycle(node, test)
            if last:
                return last
            if isinstance(node, ast.Compare) and len(node.ops) == 1 \
                    and isinstance(node.ops[0], (ast.Eq, ast.GtE, ast.Gt)):
                counter, other, strict = node.left, node.comparators[0], \
                    isinstance(node.ops[0], ast.Gt)
            elif isinstance(node, ast.Call) and method(node) in ("equal", "greater_equal") \
                    and len(node.args) == 2:
                (counter, other), strict = node.args, False
            else:
                continue
            name = dotted_name(counter)
            if not name or number(other) is not None:
                continue
            before = self._advanced_before(name, test)
            if before is None and not strict and counters.never_advanced(self.index, test, name):
                return "`%s == N` with `%s` made 0 and never advanced: the apply never runs" % (
                    name, name)
            start = self._initial(name)
            if start not in (0, 1) or before is None:
                continue
            length = int(strict) + (0 if before else 1) - start  # the cycle is N + length
            if length:
                return "`%s %s N` with `%s` from %d, advanced %s the test: cycles of N %s 1" % (
                    name, ">" if strict else "==", name, start, "before" if before else "after",
                    "-" if length < 0 else "+")
        return None

    def _last_of_cycle(self, node, test):
        """``count % N == N - 1`` with ``count`` from 0 advanced before the
        test (or from 1): the first cycle is short."""
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1
                and isinstance(node.ops[0], ast.Eq) and isinstance(node.left, ast.BinOp)
                and isinstance(node.left.op, ast.Mod)):
            return None
        other = node.comparators[0]
        if not (isinstance(other, ast.BinOp) and isinstance(other.op, ast.Sub)
                and number(other.right) == 1
                and dotted_name(other.left) == dotted_name(node.left.right)):
            return None
        name = dotted_name(node.left.left)
        before = self._advanced_before(name, test) if name else None
        start = self._initial(name) if name else None
        if before is None or start not in (0, 1):
            return None
        short = 1 + start - (0 if before else 1)  # the first cycle is N - short
        return "`%s %% N == N - 1` with `%s` from %d, advanced %s the test: the first " \
            "cycle is %d micro-batch%s short" % (name, name, start, "before" if before
                                                 else "after", short, "" if short == 1 else
                                                 "es") if short else None

    def _advanced_before(self, name, test):
        """Whether ``name`` is advanced before ``test`` in its function (or
        before the call of that function, in a caller); None: never."""
        index = self.index
        function = index.function_of(test)
        moves = [n for n in index.statements_of(function) if any_increment(n) == name]
        if moves:
            return any(n.lineno < test.lineno for n in moves)
        for call in index.callers(function) if function is not None else ():
            moves = [n for n in index.statements_of(index.function_of(call))
                     if any_increment(n) == name]
            if moves:
                return any(n.lineno < call.lineno for n in moves)
        return None

    def _initial(self, name):
        for node in self.index.assigns:
            if isinstance(node, ast.Assign) and any(dotted_name(t) == name for t in node.targets):
                return number(_made_from(node.value))
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
                start = number(first_value(node.value))
                if start is not None and start != 0:
                    return False
        function = index.function_of(test)
        for node in index.statements_of(function):
            if increment(node) == name and node.lineno < test.lineno:
                return False
        return True

    def _modulo_of(self, node):
        """``X % N`` (or ``tf.math.mod(X, N)``) compared with 0, else None."""
        compared = compared_to_zero(node)
        if compared is None and isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
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
                names = set(n.id for n in nodes_in(up.target) if isinstance(n, ast.Name))
                if counter.id not in names or not isinstance(source, ast.Call):
                    continue
                if method(source) in ("tqdm", "iter") and len(source.args) == 1 \
                        and isinstance(source.args[0], ast.Call):
                    source = source.args[0]  # tqdm(enumerate(...)): a progress bar
                starts = method(source) == "enumerate" and len(source.args) == 1 and not any(
                    k.arg == "start" for k in source.keywords)
                starts = starts or (method(source) in ("range", "xrange")
                                    and len(source.args) == 1)
                if starts and not self._applies_first(counter, apply, up):
                    first = "N + 1 micro-batches" if self._skips_zero(counter, apply) \
                        else "one micro-batch"
                    return ("`%s %% N == 0` with `%s` counting from 0: the first cycle is "
                            "%s" % (counter.id, counter.id, first))
            if isinstance(up, FUNCTIONS):
                break
        return self._counted_after(counter, apply)

    def _skips_zero(self, counter, apply):
        """A guard ``counter > 0`` (or ``!= 0``) beside the ``% N`` test."""
        return skips_zero([test for _, test in self.index.guards(apply.node)], counter)

    def _applies_first(self, counter, apply, loop):
        """The apply comes before the loop's accumulation, skipped at the
        first micro-batch (``if i > 0``): it applies the previous N."""
        index = self.index
        adds = [a for a in index.accumulates if a.key in apply.keys
                and any(up is loop for up in index.ancestors(a.node))]
        if not adds or any(a.node.lineno < apply.node.lineno for a in adds):
            return False
        return self._skips_zero(counter, apply)

    def _counted_after(self, counter, apply):
        """A Python counter made 0 and advanced after the ``% N`` test."""
        where = counters.start_and_side(self.index, counter.id, apply.node)
        if where in ((0, "after"), (1, "before")):
            first = "N - 1" if where[0] else "N + 1 micro-batches" if self._skips_zero(
                counter, apply) else "one micro-batch"  # (``and count != 0``: 0 to N)
            return ("`%s %% N == 0` with `%s` made %d and advanced %s the test: the first "
                    "cycle is %s" % (counter.id, counter.id, where[0], where[1], first))
        return None

    def _advanced_after_in_step(self, counter, test, apply):
        """``self.count % N == 0`` in a step function (a ``train_step``, a
        ``tf.function``) that advances ``self.count`` only after the test,
        where it is made 0 elsewhere (``__init__``, ``build``): the first
        call applies after one micro-batch."""
        index, name = self.index, dotted_name(counter)
        if not name or not name.startswith("self.") or self._skips_zero(counter, apply):
            return None
        function = index.function_of(test)
        moves = [n for n in index.statements_of(function) if any_increment(n) == name]
        starts = [number(_made_from(node.value)) for node in index.assigns
                  if isinstance(node, ast.Assign)
                  and any(dotted_name(t) == name for t in node.targets)
                  and index.function_of(node) is not function]
        if starts[:1] == [0] and moves and all(n.lineno > test.lineno for n in moves):
            return ("`%s %% N == 0` with `%s` made 0 and advanced after the test: the first "
                    "cycle is one micro-batch" % (name, name))
        return None


def _made_from(value):
    """``0`` of ``tf.Variable(0)`` and ``tf.Variable(initial_value=0)``; a
    value that is no call, itself."""
    made = first_value(value) if isinstance(value, ast.Call) else value
    return value if made is None else made
