"""``lint`` checks for estimator-era code that already wraps its optimizer
with ``gac.wrap``, where the lines around the apply still do what the big
batch would do once per micro-batch:

* GAC106  gradients clipped (``clip_by_global_norm`` & co.) before the
          wrapped optimizer's ``apply_gradients``: each micro-batch is
          clipped, the big batch clips the accumulated mean.
* GAC107  a step counter advanced on every run beside the wrapped
          optimizer's apply (BERT's ``global_step.assign(global_step + 1)``):
          it, and every schedule on it, counts micro-steps.

Within one function: names bound to ``gac.wrap(...)`` (anywhere in the
file), names bound to a clip's result and to what is built from them, and
the names the wrapped apply's result flows into.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import (FUNCTIONS, call_name, dotted_name, last, method,
                                             names_in, nodes_in, walk)

__all__ = ["check"]

_WRAPS = ("gac.wrap", "gradacc_compat.wrap", "wrap")
_CLIPS = ("clip_by_global_norm", "clip_by_norm", "clip_by_value", "clip_by_average_norm",
          "clip_gradients", "clip_grad_norm", "clip_gradient_norms")
_APPLIES = ("apply_gradients", "minimize")


def _bound(node):
    """Dotted names an assignment binds (``opt``, ``self.opt``)."""
    if isinstance(node, ast.Assign):
        found = []
        for target in node.targets:
            for sub in nodes_in(target):
                if isinstance(sub, (ast.Name, ast.Attribute)) and dotted_name(sub):
                    found.append(dotted_name(sub))
        return found
    return []


def _wrapper_call(name):
    """``gac.wrap``, or an accumulating optimizer wrapper by its class name
    (``GradientAccumulationOptimizer``, ``AccumGradOptimizer``, ...)."""
    if name in _WRAPS:
        return True
    last = (name or "").rsplit(".", 1)[-1].lower()
    return "optimizer" in last and ("accum" in last or "multistep" in last)


def _is_wrap(node):
    return isinstance(node, ast.Assign) and _wrapper_call(call_name(node.value))


def _wraps_in(scope):
    """The ``gac.wrap`` assignments in ``scope`` (not in nested functions)."""
    return [node for node in walk(scope, FUNCTIONS) if _is_wrap(node)]


def _module_wrapped(index):
    """{dotted name: its gac.wrap assignment} every function sees: the
    module's names and attributes (``self.opt``) bound anywhere."""
    found = {}
    for node in index.nodes:
        if _is_wrap(node):
            for name in _bound(node):
                if "." in name:
                    found[name] = node
    for node in _wraps_in(index.tree):
        for name in _bound(node):
            found[name] = node
    return found


def _wrapped(function, module_wrapped, index):
    """{dotted name: its gac.wrap assignment} seen from ``function``: its
    own and its enclosing functions' locals, and ``module_wrapped``, where
    a local bound to something else hides a module name."""
    found = dict(module_wrapped)
    local = set(name for node in nodes_in(function) if isinstance(node, ast.Assign)
                and not _wrapper_call(call_name(node.value)) for name in _bound(node))
    for name in list(found):
        if "." not in name and name in local:
            del found[name]
    scopes = [a for a in index.ancestors(function) if isinstance(a, FUNCTIONS)]
    for scope in reversed([function] + scopes):
        for node in _wraps_in(scope):
            for name in _bound(node):
                found[name] = node
    return found


def _flowing(function, seeds):
    """The assignments in ``function`` whose value contains a call
    ``seeds(call)`` accepts or a name bound by one found (to a fixpoint),
    by the plain names they bind."""
    found = {}
    assigns = [n for n in nodes_in(function) if isinstance(n, ast.Assign)]
    changed = True
    while changed:
        changed = False
        for node in assigns:
            hit = any(isinstance(s, ast.Call) and seeds(s) for s in nodes_in(node.value)) \
                or names_in(node.value) & set(found)
            new = set(n for n in _bound(node) if "." not in n) - set(found) if hit else set()
            for name in new:
                found[name] = node
                changed = True
    return found


def _is_counter(name):
    return bool(name) and "step" in last(name).lower()


def check(index, report):
    """Runs GAC106 and GAC107 on a module (its ``scopes.Scopes``);
    ``report(node, code, *args)``."""
    if not any(_is_wrap(n) for n in index.nodes):
        return
    module_wrapped = _module_wrapped(index)
    for function in index.nodes:
        if not isinstance(function, FUNCTIONS) or isinstance(function, ast.Lambda):
            continue
        wrapped = _wrapped(function, module_wrapped, index)
        # (the applies of a nested function are its own)
        applies = [n for n in walk(function, FUNCTIONS) if method(n) in _APPLIES
                   and isinstance(n.func, ast.Attribute)
                   and dotted_name(n.func.value) in wrapped]
        if not applies:
            continue
        clipped = _flowing(function, lambda call: method(call) in _CLIPS)
        for apply in applies:
            _check_clip(apply, wrapped, clipped, index, report)
        _check_counter(function, applies, report)


def _check_clip(apply, wrapped, clipped, index, report):
    if method(apply) != "apply_gradients":
        return
    wrap = wrapped[dotted_name(apply.func.value)]
    used = set()
    for arg in list(apply.args) + [k.value for k in apply.keywords]:
        used |= names_in(arg)
    for name in sorted(used & set(clipped)):
        if not index.exclusive(clipped[name], wrap):
            report(apply, "GAC106", name,
                   "the wrapped optimizer `%s`" % dotted_name(apply.func.value))
            return


def _check_counter(function, applies, report):
    results = _flowing(function, lambda call: any(call is a for a in applies))
    for node in nodes_in(function):
        if method(node) not in ("assign_add", "assign") or not node.args:
            continue
        if isinstance(node.func, ast.Attribute) and _is_counter(dotted_name(node.func.value)):
            counter, value = dotted_name(node.func.value), node.args[0]
        elif (call_name(node) or "").startswith("tf") and len(node.args) > 1 \
                and _is_counter(dotted_name(node.args[0])):
            counter, value = dotted_name(node.args[0]), node.args[1]  # tf.assign(step, v)
        else:
            continue
        if any(isinstance(s, ast.Call) and any(s is a for a in applies)
               for s in nodes_in(value)) or names_in(value) & set(results):
            continue  # advanced by what the apply returned
        report(node, "GAC107", counter,
               "the wrapped optimizer `%s`" % dotted_name(applies[0].func.value))
