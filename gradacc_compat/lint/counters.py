"""``lint``'s GAC107: step counters advanced on every micro-step beside a
hand-rolled apply -- ``global_step`` / ``iterations`` incremented where the
micro-batch is accumulated, an optimizer subclass's own ``iterations``, a
wrapper that hands its counter to the optimizer it wraps -- so schedules
and Adam's bias correction count micro-steps. A loop's own counter (a
``tf.Variable`` the file makes, a Python number only logs read) is not one.

Also what GAC109 asks of a counter: whether the file ever advances it.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import (NUMBER, dotted_name, last_line, method, nodes_in,
                                             with_contexts)
from gradacc_compat.lint.exprs import (any_increment, divides_by_n, increment, literal, made_zero,
                                       mod_parts, number)

__all__ = ["aliased_iterations", "counts_across", "decayed_lr", "graph_step",
           "made_zero_advanced_after", "never_advanced", "own_iterations", "start_and_side",
           "step_counter"]

_LOGS = ("print", "info", "debug", "warning", "log", "format", "set_description",
         "set_postfix", "scalar", "add_scalar", "write", "str", "int", "float")

def own_iterations(index, report):
    """GAC107: an optimizer subclass that keys its cycle on its own
    ``self.iterations % N``: the counter its parent's update reads
    (schedules, Adam's bias correction) then counts micro-steps."""
    supers = ("get_updates", "_resource_apply_dense", "_apply_dense", "apply_gradients",
              "_resource_apply_sparse", "_resource_apply")  # (the last: bert4keras' own hook)
    for cls in index.nodes:
        if not isinstance(cls, ast.ClassDef):
            continue
        calls = [n for n in nodes_in(cls) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and n.func.attr in supers
                 and isinstance(n.func.value, ast.Call) and method(n.func.value) == "super"]
        # (said where it hands the counter over, or a count of cycles made
        # from it: ``inner.iterations.assign((self.iterations - 1) // N)``)
        hands = any((isinstance(n, ast.Assign) and dotted_name(n.value) == "self.iterations")
                    or (method(n) == "assign" and isinstance(n.func, ast.Attribute)
                        and (dotted_name(n.func.value) or "").endswith(".iterations")
                        and dotted_name(n.func.value) != "self.iterations" and n.args
                        and any(dotted_name(m) == "self.iterations" for m in nodes_in(n.args[0])))
                    for n in nodes_in(cls))
        if not calls or hands or _advances_own(cls, ("assign_add",)) or all(
                index.branch_call(index.function_of(c)) is not None for c in calls):
            continue  # (a parent's update run only as a cycle's branch counts cycles)
        tests = [node for node, parts in ((n, mod_parts(n)) for n in nodes_in(cls))
                 if parts and _reads_iterations(parts[0])
                 and divides_by_n(ast.BinOp(left=parts[0], op=ast.Div(), right=parts[1]))]
        # (one finding per class: at the test beside the parent's update, where
        # one is; else at that update, away from a test in ``__init__``)
        near = [t for t in tests if any(index.function_of(t) is index.function_of(c)
                                        for c in calls)]
        built = [t for t in tests if getattr(index.function_of(t), "name", "") == "__init__"]
        at = near or (sorted(calls, key=lambda c: c.lineno) if tests and built == tests else tests)
        for node in at[:1]:
            report(node, "GAC107", "self.iterations",
                   "the parent's update, run by this class,")


def _reads_iterations(counter):
    """``self.iterations``, or it shifted: ``self.iterations + offset``."""
    if isinstance(counter, ast.BinOp) and isinstance(counter.op, ast.Add):
        return any(dotted_name(side) == "self.iterations" for side in (counter.left, counter.right))
    return dotted_name(counter) == "self.iterations"


def decayed_lr(index, report):
    """GAC107: an optimizer subclass whose cycle is keyed on its own
    ``self.iterations`` (``local_step // N``, ``% N``) and whose update
    asks ``self._decayed_lr(...)`` for the learning rate: the parent's
    schedule reads ``iterations``, which advances every micro-step (even
    where the bias correction counts cycles)."""
    for cls in (c for c in index.nodes if isinstance(c, ast.ClassDef)):
        decays = [n for n in nodes_in(cls) if isinstance(n, ast.Call)
                  and dotted_name(n.func) == "self._decayed_lr"]
        if not decays or _advances_own(cls, ("assign_add", "assign_sub")):
            continue
        counts, grown = set(["self.iterations"]), True
        while grown:
            size = len(counts)
            counts |= set(dotted_name(t) for n in nodes_in(cls) if isinstance(n, ast.Assign)
                          and any(dotted_name(m) in counts for m in nodes_in(n.value))
                          for t in n.targets if dotted_name(t))
            grown = len(counts) > size
        if any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mod, ast.FloorDiv))
               and any(dotted_name(m) in counts for m in nodes_in(n.left))
               and divides_by_n(ast.BinOp(left=n.left, op=ast.Div(), right=n.right))
               for n in nodes_in(cls)):
            report(decays[0], "GAC107", "self.iterations",
                   "the learning-rate schedule `_decayed_lr` reads, in the update")


def _advances_own(cls, moves):
    """The class assigns ``self.iterations``, or moves it with one of
    ``moves`` (``assign_add``, ``assign_sub``), itself."""
    return any((isinstance(n, ast.Assign) and any(
        dotted_name(t) == "self.iterations" for t in n.targets))
        or (isinstance(n, ast.Call) and method(n) in moves
            and isinstance(n.func, ast.Attribute)
            and dotted_name(n.func.value) == "self.iterations")
        for n in nodes_in(cls))


def aliased_iterations(index, report):
    """GAC107: an accumulating optimizer wrapper that hands the optimizer it
    wraps its own counter (``inner._iterations = self.iterations``): the
    wrapper's ``apply_gradients`` runs, and advances it, every micro-step,
    so the inner optimizer's schedules and bias correction count them."""
    for cls in index.nodes:
        if not isinstance(cls, ast.ClassDef) or not any(
                any(up is cls for up in index.ancestors(a.node)) for a in index.accumulates):
            continue
        for node in nodes_in(cls):
            if isinstance(node, ast.Assign) and dotted_name(node.value) == "self.iterations" \
                    and any((dotted_name(t) or "").endswith("._iterations")
                            and dotted_name(t) != "self._iterations" for t in node.targets):
                report(node, "GAC107", dotted_name(node.targets[0]),
                       "the wrapper's apply_gradients, which runs every micro-step")


def _user_variables(index):
    """Names bound to a ``tf.Variable(...)`` the file makes itself, or to a
    Python number that no call but a log reads: a loop's own counter, not
    TensorFlow's global step or an optimizer's iterations (which schedules
    read)."""
    def find():
        made = set(dotted_name(t) for n in index.assigns if isinstance(n, ast.Assign)
                   and isinstance(n.value, ast.Call) and method(n.value) == "Variable"
                   for t in n.targets)
        numbers = set(dotted_name(t) for n in index.assigns if isinstance(n, ast.Assign)
                      and isinstance(n.value, NUMBER) for t in n.targets)
        # (a call inside a log's arguments logs too: ``tf.summary.scalar('lr',
        # optimizer.learning_rate(step))`` reads the schedule to show it)
        logged = set(id(n) for c in index.calls if method(c) in _LOGS for n in nodes_in(c)
                     if n is not c)
        handed = set(dotted_name(a) for c in index.calls if method(c) not in _LOGS
                     and id(c) not in logged
                     for a in list(c.args) + [k.value for k in c.keywords])
        return made | (numbers - handed)
    return index.memo("user variables", find)


def step_counter(index, report, add, reported):
    scope = index.step_scope(add.node)
    for node, counter in index.memo(("counters", id(scope)), lambda: _counters(index, scope)):
        if ("GAC107", node.lineno) not in reported:
            reported.add(("GAC107", node.lineno))
            report(node, "GAC107", counter, "the hand-rolled apply")


def _counters(index, scope):
    """``[(node, counter)]``: the unconditional step-counter increments of
    ``scope``."""
    own = _user_variables(index)
    found = []
    for node in index.statements_of(scope):
        counter = increment(node)
        if counter and counter not in own and not _cycle_guards(index, node) \
                and not _counted_down(index, counter) and not _with_apply(index, node) \
                and not _only_cycles(index, node, counter):
            found.append((node, counter))
    return found


def _cycle_guards(index, node):
    """The guards of ``node`` but ``X is not None`` (an option given or
    not: ``if global_step is not None:``), which decides no cycle."""
    return [t for _, t in index.guards(node) if not (
        isinstance(t, ast.Compare) and len(t.ops) == 1
        and isinstance(t.ops[0], (ast.Is, ast.IsNot)) and literal(t.comparators[0]) is None)]


def _only_cycles(index, node, counter):
    """``self.iterations`` of an optimizer class that writes its own update
    (no parent's or inner optimizer's ``get_updates``) and reads it only
    in its cycle test (``% N``) and the list of its weights: no schedule
    nor bias correction counts micro-steps (a plain SGD that accumulates)."""
    cls = index.class_of(node)
    if counter != "self.iterations" or cls is None or any(
            method(n) in ("get_updates", "apply_gradients", "_resource_apply_dense")
            for n in nodes_in(cls) if isinstance(n, ast.Call)):
        return False
    parents = index.parents
    for read in (n for n in nodes_in(cls) if isinstance(n, ast.Attribute)
                 and dotted_name(n) == counter and isinstance(n.ctx, ast.Load)):
        up, inner = parents.get(read), read
        if isinstance(up, ast.BinOp) and isinstance(up.op, ast.Add):  # ((it + 1) % N)
            up, inner = parents.get(up), up
        if not (isinstance(up, ast.List) or increment(up) == counter or (
                isinstance(up, ast.BinOp) and isinstance(up.op, ast.Mod) and up.left is inner)):
            return False
    return True


def _with_apply(index, node):
    """The increment is grouped with an apply op, or runs under its control
    dependencies (``train_op = tf.group(train_op, [global_step.assign(...)])``
    in TF1 graph code): it runs when the apply does, once per cycle."""
    applies = set(id(a.node) for a in index.applies)
    bound = set(dotted_name(t) for a in index.applies
                for t in getattr(index.parents.get(a.node), "targets", ()))
    for up in index.ancestors(node):
        parts = list(up.args) if isinstance(up, ast.Call) and method(up) == "group" \
            else with_contexts(up)
        if any(id(n) in applies or (isinstance(n, ast.Name) and n.id in bound)
               for p in parts for n in nodes_in(p)):
            return True
    return False


def _counted_down(index, counter):
    """Whether the file reads ``counter // N`` (``floordiv``): it counts
    micro-steps on purpose and derives the effective step from them (a
    Keras ``AdamAccumulate``'s bias correction)."""
    def down(node):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            return dotted_name(node.left) == counter
        return isinstance(node, ast.Call) and method(node) == "floordiv" and bool(node.args) \
            and dotted_name(node.args[0]) == counter
    return index.memo(("counted down", counter),
                      lambda: any(down(n) for n in index.nodes))


def never_advanced(index, test, name):
    """In the class of ``test``, ``self.X`` is made 0 (``tf.Variable(0)``, ``tf.constant(0)``) and
    the file only sets it to 0 again and compares it: nothing advances it,
    so a test ``self.X == N`` never holds. Any other use (handed on, read
    into a name, returned) may move it: not this."""
    if not name.startswith("self.") or name.count(".") != 1:
        return False
    tree = index.class_of(test) or index.tree
    parents = index.parents
    made = False
    for node in nodes_in(tree):
        if not (isinstance(node, ast.Attribute) and dotted_name(node) == name):
            continue
        parent = parents.get(node)
        if isinstance(parent, ast.Assign) and node in parent.targets:
            made = made or method(parent.value) == "Variable"
            if not made_zero(parent.value):
                return False
        elif isinstance(parent, ast.Attribute) and parent.attr == "assign":
            call = parents.get(parent)
            if not (isinstance(call, ast.Call) and call.args and made_zero(call.args[0])):
                return False
        elif not isinstance(parent, ast.Compare) and not (
                isinstance(parent, ast.Call) and method(parent) in ("equal", "greater_equal")):
            return False
    return made


def made_zero_advanced_after(index, counter, at):
    """``counter`` made 0 outside the loop around ``at`` and advanced in it,
    only after ``at``: ``at`` sees 0 on the loop's first pass."""
    return start_and_side(index, counter, at) == (0, "after")


def start_and_side(index, counter, at):
    """``(start, "before" or "after")``: ``counter`` made ``start`` (one
    number) outside the loop around ``at``, and advanced in it only before
    ``at``, or only after it; else None. (The innermost loop around ``at``
    that advances it: an episode's count, advanced in the episodes' loop
    around the loop of steps that applies.)"""
    increments = [n for n in index.statements_of(index.function_of(at))
                  if any_increment(n) == counter]
    loop = index.loop_of(at)
    while loop is not None and not any(
            any(up is loop for up in index.ancestors(n)) for n in increments):
        loop = index.loop_of(loop)
    if loop is None:
        return None
    assigned = index.assignments(index.binder(counter, at))
    starts = [number(value) for value, node in assigned.get(counter, ())
              if not any(up is loop for up in index.ancestors(node))]
    moves = [n.lineno > at.lineno for n in increments
             if any(up is loop for up in index.ancestors(n))]
    if len(starts) != 1 or starts[0] is None or not moves or len(set(moves)) != 1:
        return None
    return starts[0], "after" if moves[0] else "before"


def counts_across(index, counter, loop):
    """``counter = 0`` (a plain name) before ``loop`` (an epoch's), in its
    function, and never set again in that loop's own body: the count runs
    on from one epoch into the next."""
    made = [n for n in index.statements_of(index.function_of(loop)) if isinstance(n, ast.Assign)
            and any(getattr(t, "id", None) == counter for t in n.targets)]
    return any(number(n.value) == 0 and n.lineno < loop.lineno for n in made) and not any(
        loop.lineno < n.lineno <= last_line(loop) and index.loop_of(n) is loop for n in made)


def graph_step(index, name, at):
    """The plain name ``name`` (seen at ``at``) is bound to the graph's step
    under a name of its own: ``batch_id = tf.train.create_global_step()``
    (or ``get_or_create_global_step``, ``get_global_step``)."""
    return "." not in name and any(
        method(v) in ("create_global_step", "get_or_create_global_step", "get_global_step")
        for v, _ in index.values_of(name, at))
