"""``lint``'s GAC102 for a TF1 optimizer wrapper that accumulates in
``compute_gradients`` (adds each micro-batch's gradients to its slots and
hands the running sums back as the gradients) but applies through an
``apply_gradients`` that no condition gates: its own base class's
delegate (``return self._opt.apply_gradients(*args, **kwargs)``) or the
one it inherits from ``tf.train.Optimizer``. Every ``minimize`` then
applies the partial sums, on every micro-batch. The same for a Keras
optimizer whose ``get_gradients`` is replaced by a function of the file
that adds to sums and returns them (``optimizer.get_gradients =
self._get_gradients`` in a callback): ``fit``'s own update applies what it
returns, the partial sums, on every batch.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, method, nodes_in

__all__ = ["patched_get_gradients", "ungated_apply"]


def ungated_apply(index, report):
    classes = dict((c.name, c) for c in index.nodes if isinstance(c, ast.ClassDef))
    for cls in classes.values():
        compute = _method(cls, "compute_gradients")
        adds = [a for a in index.accumulates if compute is not None
                and any(up is compute for up in index.ancestors(a.node))]
        if not adds or not any(isinstance(n, ast.Return) and any(
                a.node is m for m in nodes_in(n) for a in adds) for n in nodes_in(compute)):
            continue  # (not the running sums handed back as the gradients)
        owner = _owner_of_apply(cls, classes)
        apply = _method(owner, "apply_gradients") if owner is not None else None
        if apply is not None and _gated(apply):
            continue
        where = next((c for c in nodes_in(apply) if method(c) == "apply_gradients"),
                     apply) if apply is not None else compute
        report(where, "GAC102", adds[0].key[-1], ": `%s.compute_gradients` hands back the "
               "running sums and the `apply_gradients` it %s applies them whatever the "
               "count" % (cls.name, "inherits" if owner is not cls else "has"))


def _method(cls, name):
    return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == name),
                None) if cls is not None else None


def _owner_of_apply(cls, classes, hops=4):
    """The class of the file whose ``apply_gradients`` ``cls`` runs (itself
    or a base), or None when it comes from outside the file."""
    while cls is not None and hops > 0:
        if _method(cls, "apply_gradients") is not None:
            return cls
        bases = [classes.get((dotted_name(b) or "").split(".")[-1]) for b in cls.bases]
        cls, hops = next((b for b in bases if b is not None), None), hops - 1
    return None


def _gated(function):
    return any(isinstance(n, (ast.If, ast.IfExp)) or method(n) in ("cond", "case", "where",
                                                                      "switch")
               for n in nodes_in(function))


def patched_get_gradients(index, report):
    for node in index.assigns:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 \
            else None
        if not (isinstance(target, ast.Attribute) and target.attr == "get_gradients"):
            continue
        name = dotted_name(node.value) or ""
        owner = index.class_of(node) if name.startswith("self.") else None
        function = next((f for f in index.functions if getattr(f, "name", None) ==
                         name.split(".")[-1] and (owner is None or index.class_of(f) is owner)),
                        None) if name.count(".") <= 1 else None
        if function is None:
            continue
        added = set(a.key for a in index.accumulates if a.function is function)
        if any(isinstance(n, ast.Return) and n.value is not None
               and index.keys_in(n.value) & added for n in nodes_in(function)):
            report(node, "GAC102", sorted(added)[0][-1], ": `%s` replaces `get_gradients` "
                   "and hands back the running sums, which the optimizer's own update "
                   "applies on every batch" % function.name)
