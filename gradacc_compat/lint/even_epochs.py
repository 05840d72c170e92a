"""Whether a Keras ``fit`` gives each epoch a multiple of N batches, where
the file says both: ``steps_per_epoch=`` or a dataset of known size
(``tf.keras.datasets.mnist.load_data()``, 60,000 training examples) with
its ``batch_size=``, and an N given as a number to the model's
constructor (``Model(n_gradients=10, ...)``) or bound to a name the gate
compares with (``ACCUM_STEPS = 4``). Then no partial cycle is
carried from one epoch into the next (no GAC110). The same for an epoch's
own loop over a ``tf.data`` dataset of known size (``from_tensor_slices``
of ``tf.random.normal((128, 16))``, or of ``x[0:128]``) batched by a
number.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, method, nodes_in, parameter_names
from gradacc_compat.lint.exprs import first_value, number

__all__ = ["divides_evenly", "loop_divides_evenly"]

#: Training examples of the Keras datasets (``load_data()``'s first split).
_SIZES = {"mnist": 60000, "fashion_mnist": 60000, "cifar10": 50000, "cifar100": 50000,
          "imdb": 25000}
_WRAPPERS = ("constant", "Variable", "cast", "convert_to_tensor", "int")


def divides_evenly(index, fit, gate, cls):
    """``fit`` runs a multiple of the N that ``gate`` (a test in the
    methods of ``cls``) compares with, batches per epoch."""
    batches, n = _batches(index, fit), _n_of(index, gate, cls)
    return batches is not None and n is not None and batches % n == 0


def loop_divides_evenly(index, loop):
    """``loop`` walks a dataset of known size batched by a number, a
    multiple of the one N its ``% N`` tests compare with."""
    batches = _loop_batches(index, loop.iter, 3)
    ns = set(_n_of(index, n.test, None) for n in nodes_in(loop) if isinstance(n, ast.If)
             and any(isinstance(m, ast.BinOp) and isinstance(m.op, ast.Mod)
                     for m in nodes_in(n.test)))
    ns.discard(None)
    return batches is not None and len(ns) == 1 and batches % ns.pop() == 0


def _loop_batches(index, expr, hops):
    """The batches of ``ds.batch(B)`` over ``from_tensor_slices`` of rows
    the file states (through names, ``enumerate``, ``.shuffle``, ``.map``)."""
    while isinstance(expr, ast.Call) and (method(expr) in ("enumerate", "tqdm", "iter") or (
            method(expr) in ("shuffle", "map", "prefetch", "cache", "repeat")
            and isinstance(expr.func, ast.Attribute)
            and method(expr.func.value) != "from_tensor_slices")):
        expr = expr.args[0] if method(expr) in ("enumerate", "tqdm", "iter") and expr.args \
            else expr.func.value if isinstance(expr.func, ast.Attribute) else None
    if isinstance(expr, ast.Name) and hops > 0:
        bound = index.bound_once(expr)
        return _loop_batches(index, bound, hops - 1) if bound is not expr else None
    if method(expr) != "batch" or not isinstance(expr.func, ast.Attribute) or not expr.args:
        return None
    size, batch = _slices(index, expr.func.value), number(index.bound_once(expr.args[0]))
    drop = any(k.arg == "drop_remainder" and getattr(k.value, "value", None) is True
               for k in expr.keywords)
    if size is None or not batch:
        return None
    return size // batch if drop else -(-size // batch)


def _slices(index, expr):
    """The rows of ``from_tensor_slices(x)`` (of ``(x, y)``: of ``x``)."""
    while isinstance(expr, ast.Call) and method(expr) in ("shuffle", "map", "cache") \
            and isinstance(expr.func, ast.Attribute):
        expr = expr.func.value
    if method(expr) != "from_tensor_slices" or not expr.args:
        return None
    data = expr.args[0]
    data = data.elts[0] if isinstance(data, (ast.Tuple, ast.List)) and data.elts else data
    return _rows(index, data, 3)


def _rows(index, expr, hops):
    """``tf.random.normal((128, 16))``, ``np.zeros([128])`` or ``x[0:128]``."""
    if isinstance(expr, ast.Name) and hops > 0:
        bound = index.bound_once(expr)
        return _rows(index, bound, hops - 1) if bound is not expr else None
    shape = expr.args[0] if isinstance(expr, ast.Call) and expr.args else None
    if isinstance(shape, (ast.Tuple, ast.List)) and shape.elts:
        return number(shape.elts[0])
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Slice) \
            and expr.slice.upper is not None and expr.slice.step is None:
        lower = number(expr.slice.lower) if expr.slice.lower is not None else 0
        upper = number(expr.slice.upper)
        return upper - lower if lower is not None and upper is not None else None
    return None


def _n_of(index, gate, cls):
    values = set()
    # (``apply_now = tf.equal(self.count, ACCUM_STEPS)``, ``ACCUM_STEPS = 4``)
    parts = list(nodes_in(gate)) + [n for name in nodes_in(gate) if isinstance(name, ast.Name)
                                    for value, _ in index.values_of(name.id, gate)
                                    for n in nodes_in(value)]
    values.update(number(_unwrapped(v)) for name in parts if isinstance(name, ast.Name)
                  for v, _ in index.values_of(name.id, gate)
                  if (number(_unwrapped(v)) or 0) > 1)
    for attribute in (n for n in parts if isinstance(n, ast.Attribute) and cls is not None
                      and dotted_name(n.value) == "self"):
        for node in nodes_in(cls):
            if isinstance(node, ast.Assign) and any(
                    dotted_name(t) == dotted_name(attribute) for t in node.targets):
                value = _unwrapped(node.value)
                if isinstance(value, ast.Name):
                    value = _passed(index, cls, index.function_of(node), value.id)
                if number(value) is not None and number(value) > 1:
                    values.add(number(value))
    return values.pop() if len(values) == 1 else None


def _unwrapped(value):
    while isinstance(value, ast.Call) and (dotted_name(value.func) or "").split(".")[-1] \
            in _WRAPPERS and first_value(value) is not None:
        value = first_value(value)
    return value


def _passed(index, cls, method, name):
    """The one literal the file's calls of ``cls`` pass for ``method``'s
    parameter ``name`` (``__init__``'s), or a name bound once to it, else
    None."""
    params = parameter_names(method) if method is not None else []
    if getattr(method, "name", None) != "__init__" or name not in params:
        return None
    position = params.index(name) - 1  # (after self)
    found = []
    for call in index.calls:
        if (dotted_name(call.func) or "").split(".")[-1] != cls.name:
            continue
        given = [k.value for k in call.keywords if k.arg == name] or (
            call.args[position:position + 1] if position >= 0 else [])
        found += [_unwrapped(index.bound_once(g)) for g in given]  # (or ``ACCUM_STEPS``)
    numbers = set(number(f) for f in found)
    return found[0] if len(found) >= 1 and len(numbers) == 1 and None not in numbers else None


def _batches(index, fit):
    keywords = dict((k.arg, k.value) for k in fit.keywords if k.arg)
    if number(keywords.get("steps_per_epoch")) is not None:
        return number(keywords["steps_per_epoch"])
    data = fit.args[0] if fit.args else keywords.get("x")
    size = _size(index, data, 3) if data is not None else None
    batch = keywords.get("batch_size", fit.args[2] if len(fit.args) > 2 else None)
    batch = 32 if batch is None else number(batch)
    if size is None or not batch:
        return None
    return -(-size // batch)


def _size(index, expr, hops):
    """The training examples ``expr`` holds: a Keras dataset's first split,
    followed back through names bound by ``load_data()`` and calls that
    keep the examples (``tf.divide(x_train, 255)``)."""
    for call in (c for c in nodes_in(expr) if isinstance(c, ast.Call)):
        parts = (dotted_name(call.func) or "").split(".")
        if parts[-1] == "load_data" and len(parts) > 1 and parts[-2] in _SIZES:
            return _SIZES[parts[-2]]
    if hops <= 0:
        return None
    for name in (n for n in nodes_in(expr) if isinstance(n, ast.Name)):
        if "test" in name.id or "val" in name.id:
            return None
        for value, _ in index.values_of(name.id, name):
            size = _size(index, value, hops - 1)
            if size is not None:
                return size
    return None
