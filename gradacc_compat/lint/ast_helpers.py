"""The ``ast`` helpers ``lint`` and its checks share (standard library only:
lint runs without TensorFlow)."""
from __future__ import absolute_import, division, print_function

import ast
import sys

__all__ = ["FUNCTIONS", "NUMBER", "block_of", "call_name", "children", "dotted_name", "last",
           "last_line", "method", "names_in", "nodes_in", "parameter_names", "same_arm",
           "self_named", "string_of", "targets", "update_hooks", "walk", "with_contexts"]

_STRINGS = (str, type(u""))  # (Python 2: a unicode literal too)


def dotted_name(node):
    """``a.b.c`` for Name/Attribute chains, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def call_name(node):
    return dotted_name(node.func) if isinstance(node, ast.Call) else None


def method(node):
    """The called function's own name (``assign_add`` in ``a[i].assign_add(...)``).

    Keras 3's ``optimizer.apply(grads, variables)`` reads as
    ``apply_gradients``, which it is, so every check that looks for an
    apply sees it; ``dataset.apply(fn)`` stays ``apply``."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute):
        if node.func.attr == "apply" and node.args and _optimizer(node.func.value):
            return "apply_gradients"
        return node.func.attr
    return node.func.id if isinstance(node.func, ast.Name) else None


def _optimizer(node):
    """An expression named like an optimizer: ``optimizer``, ``self._opt``,
    ``model.optimizer`` (not ``options``)."""
    name = (dotted_name(node) or "").rsplit(".", 1)[-1].lower().lstrip("_")
    return name.startswith("opt") and not name.startswith("option") or name.endswith("optimizer")


def update_hooks(cls):
    """The methods of class ``cls`` that an optimizer's apply runs for each
    variable: its own ``_resource_apply_dense`` and ``_apply_dense``."""
    return [f for f in getattr(cls, "body", [])
            if getattr(f, "name", None) in ("_resource_apply_dense", "_apply_dense")]


def with_contexts(node):
    """The context expressions of a ``with`` statement (Python 3's
    ``items``, Python 2's single ``context_expr``); none for other nodes."""
    if not isinstance(node, ast.With):
        return []
    return [item.context_expr for item in getattr(node, "items", [node])]


def parameter_names(function):
    """The positional parameter names of a def or lambda (Python 2's
    ``ast.Name`` parameters too)."""
    return [getattr(a, "arg", None) or getattr(a, "id", None) for a in function.args.args]


def string_of(node):
    """The text of a string literal (``ast.Str`` or ``ast.Constant``, and
    a subscript's ``ast.Index`` around one), else None."""
    if type(node).__name__ == "Index":
        node = node.value
    text = getattr(node, "s", getattr(node, "value", None))
    return text if isinstance(text, _STRINGS) else None


def last(name):
    return name.rsplit(".", 1)[-1] if name else None


def last_line(node):
    """The last line of ``node`` (a loop with its whole body)."""
    return max(getattr(n, "lineno", 0) for n in nodes_in(node))


def children(node):
    """``ast.iter_child_nodes(node)`` as a list, kept on the node."""
    try:
        return node._gac_children
    except AttributeError:
        node._gac_children = list(ast.iter_child_nodes(node))
        return node._gac_children


def nodes_in(node):
    """``ast.walk(node)`` as a list, in its order, kept on the node: the
    checks walk the same statements and loops many times."""
    try:
        return node._gac_nodes
    except AttributeError:
        pass
    nodes, at = [node], 0
    while at < len(nodes):
        nodes.extend(children(nodes[at]))
        at += 1
    node._gac_nodes = nodes
    return nodes


def walk(node, stop=()):
    """``ast.walk`` that does not descend into nodes of the types ``stop``."""
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        for child in children(current):
            if not isinstance(child, stop):
                todo.append(child)


# Number literals: ast.Num up to Python 3.7, ast.Constant from 3.8 (where
# ast.Num is deprecated). TODO: ast.Constant alone when 2.7 and 3.7 go.
NUMBER = (ast.Constant,) if sys.version_info >= (3, 8) else (ast.Num,)
# ``True``/``False``/``None``: names in Python 2, ast.NameConstant up to 3.7,
# ast.Constant (in NUMBER) from 3.8.
NAMED = (ast.NameConstant,) if (3, 0) <= sys.version_info < (3, 8) else (ast.Name,)
FUNCTIONS = tuple(t for t in (getattr(ast, "FunctionDef", None),
                               getattr(ast, "AsyncFunctionDef", None),
                               getattr(ast, "Lambda", None)) if t is not None)
def names_in(node):
    return set(n.id for n in nodes_in(node) if isinstance(n, ast.Name))


def targets(node):
    """Names bound by an assignment, augmented assignment or for loop."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.For)):
        targets = [node.target]
    else:
        return set()
    return set(n.id for t in targets for n in nodes_in(t) if isinstance(n, ast.Name))


def fetched_in_place(target, value):
    """``{name: fetch}`` for ``grads, loss = sess.run([grads_op, loss_op])``:
    each name gets its own fetch, not the loss beside it."""
    fetches = value.args[0] if method(value) == "run" and value.args else None
    if not (isinstance(target, ast.Tuple) and isinstance(fetches, (ast.List, ast.Tuple))
            and len(fetches.elts) == len(target.elts)):
        return {}
    return dict((t.id, f) for t, f in zip(target.elts, fetches.elts) if isinstance(t, ast.Name))


def self_named(tree):
    """Renames a method's first parameter to ``self`` where the code calls
    it something else (``def compute_gradients(own, loss)``), in place, so
    that the checks follow ``own.accum_vars`` as they follow ``self.``;
    lines do not move. Static and class methods keep theirs."""
    for cls in (c for c in nodes_in(tree) if isinstance(c, ast.ClassDef)):
        for function in (f for f in cls.body if isinstance(f, FUNCTIONS[:-1]) and f.args.args):
            if any(dotted_name(d) in ("staticmethod", "classmethod")
                   for d in function.decorator_list):
                continue
            first = function.args.args[0]
            name = getattr(first, "arg", None) or getattr(first, "id", None)
            if name in (None, "self"):
                continue
            for node in nodes_in(function):
                if isinstance(node, ast.Name) and node.id == name:
                    node.id = "self"
                elif getattr(node, "arg", None) == name and not isinstance(node, ast.keyword):
                    node.arg = "self"
    return tree


def block_of(parent, statement):
    """The list of statements of ``parent`` (its body, ``else`` or
    ``finally``) that holds ``statement``, or None."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(s is statement for s in block):
            return block
    return None


def same_arm(branch, one, other):
    """``one`` and ``other`` are in the same arm of the ``if`` ``branch``."""
    if branch is None:
        return False
    inside = lambda node, arm: any(n is node for s in arm for n in nodes_in(s))
    return any(inside(one, arm) and inside(other, arm) for arm in (branch.body, branch.orelse))
