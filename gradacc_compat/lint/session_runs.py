"""Where a TF1 graph op runs: the ``sess.run(...)`` calls that run the op
a statement builds (``apply_op = opt.apply_gradients(...)`` then
``sess.run(apply_op)``), followed through the op's name in its function,
a ``self.`` attribute in its class, or a function's returned tuple
unpacked by its callers (``accum_op, apply_op = build(loss)``).

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import FUNCTIONS, dotted_name, method, nodes_in, string_of

__all__ = ["UPDATES", "fed", "fed_updates", "fetched", "is_session_run", "runs_of"]

#: How the names of ops that update the weights begin.
UPDATES = ("update", "train", "apply", "optim")


def is_session_run(node):
    """``sess.run(...)`` (any name ending in ``sess``/``session``)."""
    return isinstance(node, ast.Call) and method(node) == "run" \
        and isinstance(node.func, ast.Attribute) \
        and "sess" in (dotted_name(node.func.value) or "").split(".")[-1].lower()


def fetched(run):
    """The last parts of the names ``run`` fetches, lower case (and the
    keys of ``ops["collect_op"]``)."""
    if not run.args:
        return []
    return [(dotted_name(n) or "").split(".")[-1].lower() for n in nodes_in(run.args[0])
            if isinstance(n, (ast.Name, ast.Attribute)) and dotted_name(n)] + [
        k.lower() for n in nodes_in(run.args[0]) if isinstance(n, ast.Subscript)
        for k in [string_of(n.slice)] if k]


def runs_of(index, node):
    """The session runs of the op built by the statement around ``node``
    (``[]`` when it is no op bound to a name)."""
    return index.memo(("session runs", id(node)), lambda: _runs(index, node))


def _runs(index, node):
    statement = index.statement_of(node)
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return []
    name = dotted_name(statement.targets[0])
    function = index.function_of(statement)
    if not name or isinstance(function, ast.Lambda):
        return []
    if name.startswith("self."):
        cls = index.class_of(function) if function is not None else None
        places = [(name, f) for f in nodes_in(cls) if isinstance(f, FUNCTIONS)] if cls else []
    else:
        places = [(name, function)] + _unpacked(index, name, function)
    found = []
    for op, where in places:
        for run in index.statements_of(where):
            if is_session_run(run) and run.args and any(
                    dotted_name(n) == op for n in nodes_in(run.args[0])):
                found.append(run)
    return found


def _unpacked(index, name, function):
    """``[(name, caller)]``: ``function`` returns ``name`` in a tuple and a
    caller unpacks it (``accum_op, apply_op, zero_op = build(loss, n)``)."""
    if function is None:
        return []
    found = []
    for ret in index.statements_of(function):
        if not (isinstance(ret, ast.Return) and isinstance(ret.value, ast.Tuple)):
            continue
        names = [dotted_name(e) for e in ret.value.elts]
        if name not in names:
            continue
        position = names.index(name)
        for call in index.callers(function):
            assign = index.parents.get(call)
            if isinstance(assign, ast.Assign) and len(assign.targets) == 1 \
                    and isinstance(assign.targets[0], ast.Tuple) \
                    and len(assign.targets[0].elts) == len(names):
                outer = dotted_name(assign.targets[0].elts[position])
                if outer:
                    found.append((outer, index.function_of(call)))
    return found


def fed(index, node, keys):
    """``[(value, run)]``: what the session runs of the apply op at
    ``node`` feed to the placeholders its gradients come from
    (``sess.run(update, feed_dict={g1: grad_buffer[0], ...})``: sums kept
    in NumPy)."""
    names = set(k[-1] for k in keys)  # (``W1_grad`` returned by the method that builds the op)
    return [(v, run) for run in runs_of(index, node) for feed in _feeds(index, run)
            for k, v in _feed_pairs(feed) if k is not None and (index.key(k) in keys or (
                index.key(k) or (None,))[-1] in names and index.function_of(run)
                is not index.function_of(node))]


def _feeds(index, run):
    """The ``feed_dict`` of ``run``, or what the name handed as one is
    bound to (``feed = dict(zip(holders, sums))``)."""
    feed = run.args[1] if len(run.args) > 1 else next(
        (k.value for k in run.keywords if k.arg == "feed_dict"), None)
    if not isinstance(feed, ast.Name):
        return [feed]
    # (and ``feed[holders[i]] = sums[i]`` in a loop of the same function)
    items = [n for n in index.statements_of(index.function_of(run)) if isinstance(n, ast.Assign)
             and len(n.targets) == 1 and isinstance(n.targets[0], ast.Subscript)
             and dotted_name(n.targets[0].value) == feed.id and n.lineno < run.lineno]
    keys = [n.targets[0].slice.value if type(n.targets[0].slice).__name__ == "Index"
            else n.targets[0].slice for n in items]  # (Python < 3.9 wraps it in an Index)
    return [v for v, _ in index.values_of(feed.id, run)] + (
        [ast.Dict(keys=keys, values=[n.value for n in items])] if items else [])


def _feed_pairs(feed):
    """``[(placeholder, value)]`` of a ``feed_dict``: a dict, ``{holders[i]:
    sums[i] for i in ...}`` or ``dict(zip(holders, sums))``."""
    if isinstance(feed, ast.Dict):
        return list(zip(feed.keys, feed.values))
    if isinstance(feed, ast.DictComp):
        return [(feed.key, feed.value)]
    if method(feed) == "dict" and feed.args and method(feed.args[0]) == "zip" \
            and len(feed.args[0].args) == 2:
        return [tuple(feed.args[0].args)]
    return []


def fed_updates(index, accumulators, known):
    """``[(run, [(value, run)])]``: session runs (not in ``known``) of an op
    named for an update (``sess.run(agent.update_batch, feed_dict=dict(zip(
    agent.gradient_holders, grad_buffer)))``, the op built in another file)
    that feed it sums of gradients kept in NumPy."""
    found = []
    for run in (n for n in index.calls if is_session_run(n) and id(n) not in known):
        # (``update_grad_accums_op`` updates the sums: it accumulates)
        if not any(w.startswith(UPDATES) and "accum" not in w for w in fetched(run)):
            continue
        values = [(v, run) for f in _feeds(index, run) for _, v in _feed_pairs(f)
                  if index.sources(v, run)[0] & accumulators]
        if values:
            found.append((run, values))
    return found
