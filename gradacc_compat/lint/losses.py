"""What ``lint`` asks of a loss: was it divided by N before the gradients
were taken (then the sum of the micro-batches' gradients is their mean), or
is it a sum over the examples (then the sum of the gradients is the big
batch's gradient, and applying it undivided is right).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import NUMBER, dotted_name, last_line, method, nodes_in
from gradacc_compat.lint.exprs import (GRADIENT_CALLS, divides_by_n, is_scaling, mean_of_terms,
                                       n_names, names_n, number)

__all__ = ["scaled", "summed"]

_SUMS = ("reduce_sum", "matmul")  # (a matmul of weights and values: a weighted sum)
#: losses summed by convention: ``tf.nn.ctc_loss`` per utterance, left
#: unreduced (the gradient of the vector is that of its sum), and
#: ``tf.nn.l2_loss``. Not the ``*_with_logits`` losses: a hand loop over
#: single examples takes them one at a time, as a mean of one.
_PER_EXAMPLE = ("ctc_loss", "l2_loss")
#: Mixed precision's loss scaling: the loss goes on to the gradient.
_LOSS_SCALES = ("get_scaled_loss", "scale_loss")


def scaled(index, add, by_n=False):
    """The loss divided before the gradients are taken: anywhere in the
    accumulating method's class, or the module for functions."""
    scope = index.class_of(add.function) if add.function is not None else None
    return index.memo(("loss", id(scope), by_n), lambda: _scaled_in(index, scope, by_n)) \
        and not index.memo(("taken before", id(add)), lambda: _taken_before_division(index, add))


def _taken_before_division(index, add):
    """A gradient the sums take of a loss made from ``loss`` before the
    statement that divides ``loss`` by N: ``scaled_loss = loss / replicas``,
    then ``loss = loss / N``, then ``tape.gradient(scaled_loss, ...)`` (on
    the path that takes it, the sum is never divided)."""
    names = n_names(index)
    for grad in index.sources(add.value, add.value)[1]:
        if not (method(grad) in GRADIENT_CALLS and grad.args
                and isinstance(grad.args[0], ast.Name)):
            continue
        bound = index.values_of(grad.args[0].id, grad)
        if len(bound) != 1 or not isinstance(bound[0][1], ast.Assign) \
                or divides_by_n(bound[0][0], names):
            continue
        read = set(n.id for n in nodes_in(bound[0][0]) if isinstance(n, ast.Name))
        if any(isinstance(n, ast.Assign) and bound[0][1].lineno < n.lineno < grad.lineno
               and any(getattr(t, "id", None) in read for t in n.targets)
               and divides_by_n(n.value, names)
               for n in index.statements_of(index.function_of(grad))):
            return True
    return False


def _scaled_in(index, scope, by_n):
    far = set() if scope is not None else _far_from_gradients(index)
    nodes = list(nodes_in(scope)) if scope is not None else index.nodes
    if far:
        nodes = [n for n in nodes if not any(id(up) in far for up in index.ancestors(n))]
    # (a loss named so and not only reported: ``mean_loss = total / k``
    # for a progress bar is no scaling; unread names count, the loss may
    # reach the gradient through a call of another function)
    logged = set(dotted_name(a) for n in nodes if isinstance(n, ast.Call)
                 and method(n) not in GRADIENT_CALLS + _LOSS_SCALES
                 for a in list(n.args) + [k.value for k in n.keywords]
                 if _is_loss(a)) - set(dotted_name(a) for n in nodes if isinstance(n, ast.Call)
                                       and method(n) in GRADIENT_CALLS for a in n.args[:1])
    # (nor a sum of the micro-batches' losses, ``accum_loss += loss`` then
    # ``accum_loss /= steps``: the mean reported, not the loss differentiated)
    logged |= set(dotted_name(n.target) for n in nodes
                  if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add))
    for node in nodes:
        test = (lambda e: divides_by_n(e, n_names(index))) if by_n else (
            lambda e: is_scaling(e) and not _micro_batch_mean(index, e))
        if isinstance(node, ast.Assign) and not any(  # (``avg = epoch_loss / n``: a report)
                dotted_name(n) in logged for n in nodes_in(node.value)) \
                and _scaled_value(index, node.value, node, test, 0) and any(
                _is_loss(t) and dotted_name(t) not in logged for t in node.targets):
            return True
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div) \
                and _is_loss(node.target) and dotted_name(node.target) not in logged:
            return True
        if isinstance(node, ast.Call) and method(node) in GRADIENT_CALLS and node.args \
                and _scaled_value(index, node.args[0], node, test, 4):
            return True  # (the loss under any name: what the gradient call reads)
        if isinstance(node, ast.Call) and method(node) == "compute_average_loss":
            for kw in node.keywords:
                if kw.arg == "global_batch_size" and (any(
                        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)
                        for n in nodes_in(kw.value)) or _slice_of_step(index, node)):
                    return True
    return False


def _micro_batch_mean(index, quotient):
    """``x / flags.batch_size``, ``x / num_replicas``: a divisor made only
    of batch sizes and replica counts the file never builds from N (nor
    from a product) and never tests as a cycle's length (``episode %
    batch_size == 0``) is the micro-batch's own mean, not a scaling by 1/N."""
    divisor = quotient.right if isinstance(quotient, ast.BinOp) else None
    leaves = set(name.split(".")[-1].lower() for name in _outer_names(divisor)) \
        if divisor else set()
    if not leaves or not all("batch_size" in w or "replicas" in w for w in leaves) \
            or any(isinstance(n, ast.BinOp) for n in nodes_in(divisor)):
        return False
    built = index.memo(("batch sizes built from N",), lambda: _built_from_n(index))
    cycles = set(n.split(".")[-1].lower() for n in n_names(index))
    return not leaves & (built | cycles)  # (``% batch_size == 0``: the batch size is N)


def _outer_names(node):
    """The dotted names ``node`` reads, whole (``self.flags.batch_size``,
    not also ``self.flags``)."""
    if isinstance(node, (ast.Name, ast.Attribute)) and dotted_name(node):
        return [dotted_name(node)]
    return [name for child in ast.iter_child_nodes(node) for name in _outer_names(child)]


def _built_from_n(index):
    """The names (last parts) the file binds to a product or to a value
    named like N (``global_batch = batch_size * accum_steps``); not to a
    quotient (``batch_size / num_replicas``: a replica's share)."""
    def from_n(value):
        return any(isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult)
                   or isinstance(e, (ast.Name, ast.Attribute)) and names_n(e)
                   for e in nodes_in(value))
    return frozenset((dotted_name(t) or "").split(".")[-1].lower() for n in index.assigns
                     if isinstance(n, ast.Assign) and from_n(n.value) for t in n.targets)


def _slice_of_step(index, node):
    """``node`` runs in a loop over ``range(...)`` inside the step that
    applies once after it: the micro-batches are slices of the step's one
    batch, whose global size the loss divides by."""
    loop = index.loop_of(node)
    if not (isinstance(loop, ast.For) and method(loop.iter) == "range"):
        return False
    end = last_line(loop)
    function = index.function_of(loop)
    return function is not None and any(
        a.function is function and a.node.lineno > end for a in index.applies)


def _far_from_gradients(index):
    """The module's functions no gradient is taken near: none in them, in
    the functions they call or in those that call them, and never handed
    on by name (a loss function given to ``compile``). A loss scaled there
    (``(1/N) * np.sum(...)`` in a NumPy reference) is not the one the
    accumulation differentiates."""
    def differentiates(f):
        return any(method(n) in GRADIENT_CALLS + ("GradientTape",) for n in nodes_in(f))
    defs = [f for f in index.functions if isinstance(f, ast.FunctionDef)
            and not isinstance(index.parents.get(f), ast.ClassDef)]
    near = set(id(f) for f in defs if differentiates(f))
    for f in defs:
        callers = [index.function_of(c) for c in index.callers(f)]
        callees = [index.callee(c) for c in nodes_in(f) if isinstance(c, ast.Call)]
        if any(g is not None and id(g) in near for g in callers + callees):
            near.add(id(f))
    named = set(n.id for n in index.nodes if isinstance(n, ast.Name)
                and not isinstance(index.parents.get(n), ast.Call))
    return set(id(f) for f in defs if id(f) not in near and f.name not in named)


def _scaled_value(index, expr, at, scaled, depth):
    """Whether the value of ``expr`` itself is scaled: a quotient or
    product at its top, or in what the names there are bound to, not in
    the arguments of the calls that make it (``loss_fn(y[:n // N])``
    slices the data, it does not scale the loss)."""
    if isinstance(expr, ast.BinOp):
        quotient = ast.BinOp(left=ast.Name(id="_", ctx=ast.Load()), op=ast.Div(),
                             right=expr.right)  # (by what it divides, not what)
        if isinstance(expr.op, ast.Div) and scaled(quotient) and not mean_of_terms(expr):
            return True
        return any(_scaled_value(index, side, at, scaled, depth)
                   for side in (expr.left, expr.right))
    if isinstance(expr, ast.Call) and method(expr) == "placeholder":
        return _fed_scaled(index, expr, scaled)
    if isinstance(expr, ast.Call):
        return scaled(expr) and method(expr) in ("divide", "truediv", "div", "multiply")
    if isinstance(expr, ast.UnaryOp):  # (``loss = -elbo``)
        return _scaled_value(index, expr.operand, at, scaled, depth)
    if isinstance(expr, ast.Name) and depth > 0:
        return any(_scaled_value(index, value, node, scaled, depth - 1)
                   for value, node in index.values_of(expr.id, at))
    return False


def _fed_scaled(index, holder, scaled):
    """A placeholder the file feeds a scale: ``loss * grad_scale_ph`` with
    ``feed_dict={grad_scale_ph: rows / logical_batch}`` (or a name bound
    to such a quotient)."""
    assign = index.parents.get(holder)
    name = dotted_name(assign.targets[0]) if isinstance(assign, ast.Assign) \
        and len(assign.targets) == 1 else None
    if not name:
        return False
    fed = [v for d in index.nodes if isinstance(d, ast.Dict) for k, v in zip(d.keys, d.values)
           if k is not None and (dotted_name(k) or "").split(".")[-1] == name.split(".")[-1]]
    return any(scaled(value) or isinstance(value, ast.Name) and any(
        scaled(bound) for bound, _ in index.values_of(value.id, value)) for value in fed)


def summed(index, add):
    """Every loss differentiated for what ``add`` accumulates is a sum over
    the examples: ``tf.reduce_sum`` terms (or a loss per example left
    unreduced, ``tf.nn.ctc_loss(...)``) added, subtracted or multiplied by
    numbers, with no division anywhere (``reduce_sum(x) / batch`` is a mean)."""
    chain = index.sources(add.value, add.value)[1]
    calls = [n for e in chain + _attribute_values(index, add, chain) for n in nodes_in(e)
             if isinstance(n, ast.Call) and method(n) in GRADIENT_CALLS and n.args]
    return bool(calls) and all(index.memo(("summed", id(c)), lambda c=c: _sum_of_examples(
        index, c.args[0], c, 3)) for c in calls)


def _attribute_values(index, add, chain):
    """What the accumulating class assigns to the ``self.`` attributes the
    sums' sources read (``self.grads_and_vars = opt.compute_gradients(...)``
    in ``__init__``, read by the adds built beside it)."""
    owner = index.class_of(add.function) if add.function is not None else None
    read = set(dotted_name(n) for e in chain for n in nodes_in(e)
               if isinstance(n, ast.Attribute) and (dotted_name(n) or "").startswith("self."))
    return [n.value for n in index.assigns if owner is not None and read
            and isinstance(n, ast.Assign) and index.class_of(n) is owner
            and any(dotted_name(t) in read for t in n.targets)]


def _sum_of_examples(index, expr, at, depth):
    if isinstance(expr, NUMBER):
        return True
    if isinstance(expr, ast.UnaryOp):
        return _sum_of_examples(index, expr.operand, at, depth)
    if isinstance(expr, ast.BinOp):
        sides = [_sum_of_examples(index, side, at, depth) for side in (expr.left, expr.right)]
        if isinstance(expr.op, (ast.Add, ast.Sub)):
            return all(sides)
        return isinstance(expr.op, ast.Mult) and all(sides) and any(
            isinstance(side, NUMBER) for side in (expr.left, expr.right))
    if isinstance(expr, ast.Call) and depth > 0 and index.callee(expr) is not None:
        return _returns_sums(index, index.callee(expr), None, depth)  # (``compute_loss(...)``)
    if isinstance(expr, ast.Call):
        return method(expr) in _SUMS + _PER_EXAMPLE and not any(
            isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) for n in nodes_in(expr))
    if depth <= 0:
        return False
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name):
        # (``metrics = compute_loss(...)``, ``loss = metrics[0]``)
        index_node = expr.slice.value if type(expr.slice).__name__ == "Index" else expr.slice
        element = number(index_node)  # (Python < 3.9 wraps it in ast.Index)
        calls = [v for v, _ in index.values_of(expr.value.id, at) if isinstance(v, ast.Call)]
        return element is not None and len(calls) == 1 and index.callee(calls[0]) is not None \
            and _returns_sums(index, index.callee(calls[0]), element, depth)
    if isinstance(expr, ast.Name):
        values = index.values_of(expr.id, at)
    elif isinstance(expr, ast.Attribute) and (dotted_name(expr) or "").startswith("self."):
        owner = index.class_of(index.function_of(at) or at)
        values = [(n.value, n) for n in index.assigns if isinstance(n, ast.Assign)
                  and owner is not None and index.class_of(index.function_of(n) or n) is owner
                  and any(dotted_name(t) == dotted_name(expr) for t in n.targets)]
    else:
        return False
    return bool(values) and all(_sum_of_examples(index, value, node, depth - 1)
                                for value, node in values)


def _returns_sums(index, function, element, depth):
    """Every ``return`` of ``function`` (its ``element``-th item when it
    returns a tuple) is a sum over the examples."""
    returns = [n for n in index.statements_of(function)
               if isinstance(n, ast.Return) and n.value is not None]
    values = [(r.value.elts[element] if element is not None and isinstance(r.value, ast.Tuple)
               and element < len(r.value.elts) else r.value, r) for r in returns]
    return bool(values) and all(not isinstance(v, ast.Tuple) and _sum_of_examples(
        index, v, r, depth - 1) for v, r in values)


def _is_loss(node):
    return "loss" in (dotted_name(node) or "").lower()
