"""Expressions ``lint`` reads the same way everywhere: divisions, step
counters and their increments, and the loads a dataflow follows (not into
the loss a gradient call differentiates).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast
import numbers

from gradacc_compat.lint.ast_helpers import children, dotted_name, method, nodes_in

__all__ = ["CONDS", "GRADIENT_CALLS", "accumulation", "any_increment", "compared_to_zero",
           "conjuncts", "counted", "counter_name", "counts_epochs", "divides_by_n",
           "first_value", "increment", "is_division", "is_scaling", "literal", "loads",
           "made_zero", "mean_of_terms", "mod_parts", "modulo_tested", "n_names", "names_n",
           "no_accumulation", "number", "outside_gradients", "reads_modulo"]

#: Calls whose function arguments run conditionally (branches).
CONDS = ("cond", "smart_cond", "case", "switch", "where")
#: Calls that differentiate: what flows into them is a loss, not a gradient.
GRADIENT_CALLS = ("gradient", "gradients", "compute_gradients", "get_gradients")
_DIVIDES = ("divide", "truediv", "div", "divide_no_nan", "realdiv", "reduce_mean", "mean")
#: Words that name the number of micro-batches (the N a scaling divides by).
_N_WORDS = ("accum", "step", "multiplier", "micro", "n_grad", "num_acc", "grad_acc",
            "n_acum", "update_freq", "iter_size", "sub_div", "virtual_batch")


def outside_gradients(node):
    """``node``'s sub-nodes, not inside the arguments of a call that
    differentiates (what flows in there is a loss)."""
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        if isinstance(current, ast.Call) and method(current) in GRADIENT_CALLS:
            todo.append(current.func)
        else:
            todo.extend(children(current))


def is_division(node):
    """Whether ``node`` divides (``/``, ``tf.math.divide``, a mean), outside
    the loss a gradient call differentiates; not a count (``int(b / n)``,
    a split's size, ``batch // micro``)."""
    if method(node) in ("int", "round", "ceil", "floor", "range", "len"):
        return False
    for sub in outside_gradients(node):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Div):
            return True
        if isinstance(sub, ast.Call) and method(sub) in _DIVIDES:
            return True
    return False


def is_scaling(node):
    """Whether ``node`` divides explicitly (``/``, ``tf.math.divide``, or a
    product with a quotient): a loss scaled by 1/N, not a mean."""
    for sub in nodes_in(node):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, (ast.Div, ast.FloorDiv)):
            return True
        if isinstance(sub, ast.Call) and method(sub) in _DIVIDES[:5]:
            return True
    return False


def mean_of_terms(node):
    """``(loss_1_2 + loss_2_1) / 2``: the mean of a loss's k terms, divided
    by the literal k; no scaling by 1/N."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) \
        and _terms(node.left) == number(node.right) > 1


def _terms(node):
    """How many terms ``a + b + c`` adds (1 for anything else)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _terms(node.left) + _terms(node.right)
    return 1


def loads(node, settings=True):
    """The Name/Attribute loads of ``node``, not inside the arguments of a
    call that differentiates (a loss goes in, a gradient comes out); without
    ``settings``, not in the keyword arguments that set how a value is made
    (``stddev=``, ``name=``, ``step=``: not the value) nor in slices."""
    todo = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, ast.Call) and method(current) in GRADIENT_CALLS:
            todo.append(current.func)
            continue
        if not settings and (isinstance(current, ast.keyword) and current.arg in _SETTINGS
                             or isinstance(current, ast.Slice)):
            continue  # (``x[start:end]``: where a slice starts is no value of it)
        if isinstance(current, (ast.Name, ast.Attribute)) and isinstance(
                getattr(current, "ctx", None), ast.Load):
            yield current
            if isinstance(current, ast.Attribute):
                continue  # the longest chain names it
        todo.extend(children(current))


#: Keyword arguments that set how a value is made, not the value itself.
_SETTINGS = ("stddev", "mean", "seed", "name", "dtype", "shape", "axis", "keepdims", "decay",
             "learning_rate", "lr", "momentum", "epsilon", "step", "global_step", "use_locking",
             "clip_norm", "clip_value_min", "clip_value_max", "initializer")


_NOT_LITERAL = object()
_NAMED = {"True": True, "False": False, "None": None}  # (Python 2 parses them as names)


def literal(node):
    """The value of a literal number, ``True``, ``False`` or ``None`` (in
    every Python's ``ast``), else a marker that equals none of them."""
    if isinstance(node, ast.Name):
        return _NAMED.get(node.id, _NOT_LITERAL)
    if type(node).__name__ in ("Constant", "NameConstant", "Num"):
        value = node.value if hasattr(node, "value") else node.n
        if value is None or isinstance(value, numbers.Number):
            return value
    return _NOT_LITERAL


def number(node):
    """The value of a literal number (not ``True`` nor ``False``), else None."""
    value = literal(node)
    return value if isinstance(value, numbers.Number) and not isinstance(value, bool) else None


def made_zero(value):
    """``0``, ``tf.Variable(0, ...)``, ``tf.Variable(tf.constant(0, ...))``,
    ``tf.zeros_like(x)``: a value that starts (or starts again) at zero."""
    while isinstance(value, ast.Call) and method(value) in ("Variable", "constant", "cast") \
            and first_value(value) is not None:
        value = first_value(value)
    return number(value) == 0 or method(value) in ("zeros_like", "zeros")


def first_value(call):
    """What ``call`` is made from: its first argument, or its
    ``initial_value=`` (``tf.Variable(initial_value=0)``), ``initializer=``
    or ``value=``; else None."""
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords
                 if k.arg in ("initial_value", "initializer", "value")), None)


def compared_to_zero(node, ops=(ast.Eq,)):
    """``X`` of ``X == 0`` (a comparison by one of ``ops``) or of
    ``tf.equal(X, 0)``, else None."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ops) \
            and number(node.comparators[0]) == 0:
        return node.left
    if ast.Eq in ops and isinstance(node, ast.Call) and method(node) == "equal" \
            and len(node.args) == 2 and number(node.args[1]) == 0:
        return node.args[0]
    return None


def modulo_tested(node, ops=(ast.Eq,)):
    """``X % N`` of ``X % N == 0`` (or ``tf.equal(X % N, 0)``), else None."""
    left = compared_to_zero(node, ops)
    return left if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mod) else None


def reads_modulo(node):
    """Whether ``node`` holds an ``X % N`` (or ``tf.math.floormod(X, N)``):
    a test that may decide a cycle."""
    return any(mod_parts(n) is not None for n in nodes_in(node))


def mod_parts(node):
    """``(X, N)`` of ``X % N`` or ``tf.math.floormod(X, N)`` (``mod``), with
    an added number dropped from X (``self.iterations + 1``), else None."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        left, right = node.left, node.right
    elif isinstance(node, ast.Call) and method(node) in ("floormod", "mod") \
            and len(node.args) == 2:
        left, right = node.args
    else:
        return None
    return counted(left), right


def counted(node):
    """What ``node`` counts, an added number dropped: ``step`` of ``step +
    1`` (``node`` itself otherwise)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) \
            and number(node.right) is not None:
        return node.left
    return node


def counts_epochs(node):
    """``node`` names a number of epochs (``num_epochs``, ``epochs``), not
    of batches in one (``steps_per_epoch``, ``epoch_size``)."""
    return (dotted_name(node) or "").split(".")[-1].lower().endswith("epochs")


def counter_name(node):
    """``global_step`` / ``optimizer.iterations`` / ``self.iterations``:
    the step counters schedules and Adam's bias correction read."""
    name = dotted_name(node)
    if not name and isinstance(node, ast.Call) and method(node) in ("read_value", "value"):
        name = dotted_name(node.func.value) if isinstance(node.func, ast.Attribute) else None
    last = name.split(".")[-1] if name else ""
    return name if "global_step" in last or last.endswith("iterations") else None


def increment(node):
    """The counter ``node`` adds one to, or None."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) \
            and number(node.value) == 1:
        return counter_name(node.target)
    if not isinstance(node, ast.Call):
        return None
    name = method(node)
    args = list(node.args)
    if name in ("assign_add", "update_add"):
        owner = node.func.value if isinstance(node.func, ast.Attribute) and dotted_name(
            node.func) not in ("tf.assign_add", "tf.compat.v1.assign_add", "K.update_add") \
            else (args.pop(0) if args else None)
        if owner is not None and args and _one(args[0]):
            return counter_name(owner)
    if name in ("assign", "update"):
        owner = node.func.value if isinstance(node.func, ast.Attribute) and dotted_name(
            node.func) not in ("tf.assign", "tf.compat.v1.assign", "K.update") \
            else (args.pop(0) if args else None)
        counter = counter_name(owner) if owner is not None else None
        if counter and args:
            return counter if _plus_one(args[0]) else None
    return None


def n_names(index):
    """The names the file's own cycle tests take N from (``(i + 1) % n ==
    0``, ``tf.equal(step % k, 0)``): N by the file's word for it, whatever
    that is (for ``divides_by_n``'s ``names``)."""
    def find():
        names = set()
        for node in index.nodes:
            tested = compared_to_zero(node, (ast.Eq, ast.NotEq))
            parts = mod_parts(tested) if tested is not None else None
            if parts and dotted_name(parts[1]):
                names.add(dotted_name(parts[1]))
        return frozenset(names)
    return index.memo(("n names",), find)


def divides_by_n(node, names=()):
    """Whether ``node`` divides by something named like N (``/ accum_steps``,
    ``* (1 / n_micro)``), not a batch size; or by one of ``names`` (the
    file's cycle lengths: ``n_names``)."""
    for sub in outside_gradients(node):
        divisor = None
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, (ast.Div, ast.FloorDiv)):
            divisor = sub.right
        elif isinstance(sub, ast.Call) and method(sub) in ("divide", "truediv", "div") \
                and len(sub.args) == 2:
            divisor = sub.args[1]
        if divisor is not None and (names_n(divisor) or any(
                dotted_name(n) in names for n in nodes_in(divisor))):
            return True
        if isinstance(sub, ast.Call) and (method(sub) or "").startswith(
                ("get_averaged_", "get_average_", "get_mean_")):
            return True  # (a helper's sums read as their mean: ``acc.get_averaged_gradients()``)
    return False


def no_accumulation(test):
    """``accum_steps == 1`` (or ``<= 1``, ``< 2``, alone or in an ``and``): the test
    of a path that does not accumulate at all."""
    return any(_compares_steps(part, ((ast.Eq, 1), (ast.LtE, 1), (ast.Lt, 2))) or (
        isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.Not) and _flag(part.operand))
        for part in conjuncts(test))


def accumulation(test):
    """``accum_steps > 1`` (or ``>= 2``, ``!= 1``, alone or in an ``and``):
    the test of the path that accumulates."""
    return any(_compares_steps(part, ((ast.Gt, 1), (ast.NotEq, 1), (ast.GtE, 2))) or _flag(part)
               for part in conjuncts(test))


def _flag(node):
    """A switch for accumulating: ``self._use_grad_accum``, ``use_ga``."""
    name = (dotted_name(node) or "").split(".")[-1].lower()
    return name.startswith(("use_", "_use_", "do_", "enable")) and ("accum" in name
                                                                    or name.endswith("_ga"))


def conjuncts(test):
    """The parts of an ``and`` (or the test itself)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return test.values
    return [test]


def _compares_steps(part, forms):
    """``part`` is ``<a name of N> <op> <number>`` for one ``(op, number)``
    of ``forms``."""
    return isinstance(part, ast.Compare) and len(part.ops) == 1 and names_n(part.left) \
        and any(isinstance(part.ops[0], op) and number(part.comparators[0]) == n
                for op, n in forms)


def names_n(node):
    """``node`` names N (``accum_steps``, ``gradient_accumulation_steps[i]``)."""
    names = [(dotted_name(n) or "").lower() for n in nodes_in(node)]
    words = " ".join(n for n in names if "accum" in n or not n.endswith("step"))
    return any(w in words for w in _N_WORDS)  # (``step``, ``global_step``: counters, no N)


def any_increment(node):
    """The dotted name ``node`` adds one to (any counter), or None."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) \
            and number(node.value) == 1:
        return dotted_name(node.target)
    if isinstance(node, ast.Call) and method(node) == "assign_add" and node.args \
            and number(node.args[-1]) == 1:
        if isinstance(node.func, ast.Attribute) and len(node.args) == 1:
            return dotted_name(node.func.value)
        if len(node.args) == 2:
            return dotted_name(node.args[0])
    return None


def _one(value):
    """``1``, or ``tf.constant(1, dtype=...)`` / ``tf.cast(1, ...)``."""
    if isinstance(value, ast.Call) and method(value) in ("constant", "cast") and value.args:
        value = value.args[0]
    return number(value) == 1


def _plus_one(value):
    """``x + 1``, or a name (``new_global_step``, bound to ``x + 1``)."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return any(number(side) == 1 for side in (value.left, value.right))
    return isinstance(value, ast.Name)  # new_global_step = global_step + 1
