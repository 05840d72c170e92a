"""``python -m gradacc_compat lint PATH...``: find hand-rolled accumulation bugs.

Reads Python sources with the standard library's ``ast`` (nothing is run,
TensorFlow is not needed) and reports the mistakes that copied accumulation
loops make, each as ``file:line: CODE message`` on the line of the mistake:

* GAC001  accumulated gradients applied as a sum, never divided by the
          number of micro-batches (the learning rate is silently N times).
* GAC002  ``apply_gradients`` on every micro-batch, in the loop that
          accumulates (no ``if`` around it): nothing is accumulated.
* GAC003  the model's own weights assigned zeros to "reset" accumulators.
* GAC004  a cross-replica reduce (``all_reduce`` / ``strategy.reduce``) in
          the function that accumulates: one all-reduce per micro-step.
* GAC005  a Python counter or list passed to a ``tf.function``: it retraces
          on every new value (or reads a stale one).
* GAC006  gradients clipped before a ``gac.wrap`` optimizer's apply (each
          micro-batch clipped) -- see ``lint_wrapped``.
* GAC007  a step counter advanced on every run beside a ``gac.wrap``
          optimizer (it counts micro-steps) -- see ``lint_wrapped``.

Exit status: 1 when something was found, 0 when clean, 2 on bad usage or
an unreadable file. ``--suggest`` also prints the gradacc_compat loop that
replaces what was found.
"""
from __future__ import absolute_import, division, print_function

import ast
import io
import os
import sys

from gradacc_compat.lint import wrapped as lint_wrapped
from gradacc_compat.lint.ast_helpers import call_name as _call_name
from gradacc_compat.lint.ast_helpers import dotted_name as _name
from gradacc_compat.lint.ast_helpers import FUNCTIONS as _FUNCTIONS
from gradacc_compat.lint.ast_helpers import last as _last
from gradacc_compat.lint.ast_helpers import method as _method
from gradacc_compat.lint.ast_helpers import names_in as _names_in
from gradacc_compat.lint.ast_helpers import NUMBER as _NUMBER
from gradacc_compat.lint.ast_helpers import targets as _targets
from gradacc_compat.lint.ast_helpers import walk as _walk

__all__ = ["Finding", "lint_source", "lint_paths", "main", "SUGGESTION"]

USAGE = "usage: python -m gradacc_compat lint [--suggest] PATH [PATH ...]\n"

SUGGESTION = """\
# gradacc_compat replacement (README: "Custom training loops"):
import gradacc_compat as gac

acc = gac.GradientAccumulator(steps=N)      # under strategy.scope() if distributed

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))   # as without accumulation
    grads = tape.gradient(loss, model.trainable_variables)
    acc.step(optimizer, grads, model.trainable_variables)  # applies the mean every N calls

for x, y in dataset:
    train_step(x, y)
acc.flush(optimizer)                        # the epoch's last partial cycle, if you want it
# Keras fit: model.compile(optimizer=gac.wrap(optimizer, steps=N), ...)
"""

MESSAGES = {
    "GAC001": ("accumulated gradients `%s` are applied as a sum, never divided by the "
               "number of micro-batches: the update is N times the big batch's. Divide "
               "by N (or use gac.GradientAccumulator, which applies the mean)"),
    "GAC002": ("apply_gradients runs on every micro-batch of the loop that accumulates "
               "`%s`: nothing is accumulated. Apply once every N micro-batches (or use "
               "acc.step(...), which does)"),
    "GAC003": ("`%s` zeroes the model's own weights, not the accumulators: training "
               "restarts from zero every cycle. Reset the accumulator variables (or use "
               "gac.GradientAccumulator, which resets itself)"),
    "GAC004": ("`%s` reduces across replicas in the function that accumulates: one "
               "all-reduce per micro-step. Accumulate replica-local and reduce once per "
               "effective step (gac.GradientAccumulator: the optimizer's own all-reduce, "
               "once)"),
    "GAC005": ("`%s` is a Python %s passed to the tf.function `%s`: it retraces for every "
               "new value (and a list of tensors is traced as constants). Keep counters "
               "and accumulators in tf.Variables (gac.GradientAccumulator keeps both)"),
}
MESSAGES.update(lint_wrapped.MESSAGES)


class Finding(object):
    """One mistake: ``path:line: code message``."""

    def __init__(self, path, line, code, message):
        self.path, self.line, self.code, self.message = path, line, code, message

    def __str__(self):
        return "%s:%d: %s %s" % (self.path, self.line, self.code, self.message)

    def __repr__(self):
        return "Finding(%r, %d, %r)" % (self.path, self.line, self.code)


# ------------------------------------------------------------ ast helpers
_LOOPS = (ast.For, ast.While) + tuple(t for t in (getattr(ast, "AsyncFor", None),) if t)
_MODEL_WEIGHTS = ("trainable_variables", "trainable_weights", "variables", "weights")
_REDUCES = ("all_reduce", "reduce", "batch_reduce_to", "reduce_to", "allreduce")


def _is_division(node):
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.FloorDiv))
               for n in ast.walk(node)) or any(
                   _method(n) in ("divide", "truediv", "div", "divide_no_nan")
                   for n in ast.walk(node))


# ------------------------------------------------------------ the checks
class _Linter(object):
    def __init__(self, path, tree):
        self.path = path
        self.tree = tree
        self.findings = []

    def report(self, node, code, *args):
        self.findings.append(Finding(self.path, node.lineno, code, MESSAGES[code] % args))

    def run(self):
        tf_functions = self._tf_functions()
        for node in ast.walk(self.tree):
            if isinstance(node, _LOOPS):
                self._check_loop(node)
            if isinstance(node, _FUNCTIONS) and not isinstance(node, ast.Lambda):
                self._check_reduce_per_micro_step(node)
            self._check_zeroed_weights(node)
            if isinstance(node, ast.Call):
                self._check_tf_function_arguments(node, tf_functions)
        lint_wrapped.check(self.tree, self.report)
        self.findings.sort(key=lambda f: (f.line, f.code))
        return self.findings

    # -- GAC001 / GAC002: the accumulating loop --------------------------
    def _accumulated(self, body_nodes):
        """Names that gather gradients in ``body_nodes``: ``x += g``,
        ``x = [a + g for ...]``, ``x[i] += g``, ``x.assign_add(g)``."""
        found = {}
        for node in body_nodes:
            for sub in _walk(node, _FUNCTIONS):
                if isinstance(sub, ast.AugAssign) and isinstance(sub.op, ast.Add):
                    target = sub.target
                    if isinstance(target, ast.Subscript):
                        target = target.value
                    name = _name(target)
                    if name and not isinstance(sub.value, _NUMBER):
                        found.setdefault(name, sub)
                elif isinstance(sub, ast.Assign) and len(sub.targets) == 1:
                    name = _name(sub.targets[0])
                    value = sub.value
                    if (name and isinstance(value, ast.ListComp)
                            and isinstance(value.elt, ast.BinOp)
                            and isinstance(value.elt.op, ast.Add)):
                        found.setdefault(name, sub)
                elif isinstance(sub, ast.Call) and _method(sub) == "assign_add":
                    owner = _name(sub.func.value)
                    if isinstance(sub.func.value, ast.Subscript):
                        owner = _name(sub.func.value.value)
                    if owner and sub.args and not isinstance(sub.args[0], _NUMBER):
                        found.setdefault(owner, sub)
        return found

    def _check_loop(self, loop):
        accumulated = self._accumulated(loop.body)
        if not accumulated:
            return
        for node in loop.body:
            for sub in _walk(node, _FUNCTIONS):
                if not (isinstance(sub, ast.Call)
                        and _method(sub) == "apply_gradients" and sub.args):
                    continue
                applied = _names_in(sub.args[0]) | set(
                    _name(n) for n in ast.walk(sub.args[0]) if _name(n))
                names = [n for n in accumulated if n in applied or n.split(".")[0] in applied]
                if not names:
                    continue
                if not self._guarded(loop, sub):
                    self.report(sub, "GAC002", names[0])
                elif not self._divided(loop, names[0], sub):
                    self.report(sub, "GAC001", names[0])

    def _guarded(self, loop, call):
        """Whether ``call`` sits under an ``if`` inside ``loop``."""
        for node in ast.walk(loop):
            if isinstance(node, ast.If) and any(n is call for n in ast.walk(node)):
                return True
        return False

    def _divided(self, loop, name, call):
        """Whether the accumulated value is divided somewhere: in the apply's
        argument, or in a statement of the loop that rebinds it or reads it
        into another name, or a loss divided by the number of steps."""
        if _is_division(call.args[0]):
            return True
        short = name.split(".")[0]
        for node in ast.walk(loop):
            if isinstance(node, (ast.Assign, ast.AugAssign)) and node is not call:
                value = node.value
                if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Div, ast.FloorDiv)):
                    if short in _names_in(node.target):
                        return True
                if (short in _names_in(value) or short in _targets(node)) and _is_division(value):
                    return True
            if isinstance(node, ast.Call) and _method(node) in ("assign", "assign_add") \
                    and node.args:  # accum[i].assign_add(g / N)
                if short in _names_in(node) and _is_division(node.args[0]):
                    return True
        # A loss scaled by the number of micro-batches before differentiating.
        for node in ast.walk(loop):
            if isinstance(node, ast.Assign) and any(
                    "loss" in t.lower() for t in _targets(node)) and _is_division(node.value):
                return True
        return False

    # -- GAC003: zeroing the model's weights -----------------------------
    def _check_zeroed_weights(self, node):
        if isinstance(node, (ast.For, ast.ListComp)):
            if isinstance(node, ast.For):
                target, iterable, body = node.target, node.iter, node.body
            else:
                generator = node.generators[0]
                target, iterable, body = generator.target, generator.iter, [node.elt]
            if _last(_name(iterable)) not in _MODEL_WEIGHTS or not isinstance(target, ast.Name):
                return
            for stmt in body:
                for sub in _walk(stmt, _FUNCTIONS):
                    if (_method(sub) == "assign"
                            and _name(sub.func.value) == target.id and sub.args
                            and _method(sub.args[0]) in ("zeros_like", "zeros")):
                        self.report(sub, "GAC003", "%s.assign(...)" % target.id)

    # -- GAC004: a reduce per micro-step ---------------------------------
    def _check_reduce_per_micro_step(self, function):
        body = function.body
        accumulates = self._accumulated(body)
        if not accumulates:
            return
        for stmt in body:
            for sub in _walk(stmt, _FUNCTIONS):
                call = _call_name(sub)
                if _last(call) not in _REDUCES or "." not in (call or ""):
                    continue
                if self._guarded(function, sub):
                    continue
                if _last(call) == "reduce" and not any(
                        k in call.lower() for k in ("strategy", "replica", "ctx")):
                    continue  # functools.reduce, tf.reduce_* and friends
                self.report(sub, "GAC004", call)

    # -- GAC005: Python values into a tf.function -----------------------
    def _tf_functions(self):
        found = set()
        for node in ast.walk(self.tree):
            if isinstance(node, _FUNCTIONS) and not isinstance(node, ast.Lambda):
                for dec in node.decorator_list:
                    dec_name = _name(dec.func if isinstance(dec, ast.Call) else dec)
                    if dec_name and _last(dec_name) == "function":
                        found.add(node.name)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and _method(node.value) == "function":
                found.update(_targets(node))
        return found

    def _check_tf_function_arguments(self, call, tf_functions):
        callee = _call_name(call)
        if callee not in tf_functions:
            return
        counters, lists = self._python_values()
        for arg in call.args:
            if isinstance(arg, ast.Name) and arg.id in counters:
                self.report(call, "GAC005", arg.id, "counter", callee)
            elif isinstance(arg, ast.Name) and arg.id in lists:
                self.report(call, "GAC005", arg.id, "list", callee)

    def _python_values(self):
        """Names that hold Python ints that change (loop indices from
        enumerate/range, ``n += 1``) and Python lists of gradients."""
        if hasattr(self, "_values"):
            return self._values
        counters, lists = set(), set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.For):
                iterator = _method(node.iter)
                if iterator in ("range", "xrange"):
                    counters.update(_targets(node))
                elif iterator == "enumerate" and isinstance(node.target, ast.Tuple) \
                        and isinstance(node.target.elts[0], ast.Name):
                    counters.add(node.target.elts[0].id)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) \
                    and isinstance(node.value, _NUMBER):
                counters.add(node.target.id)
            elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.ListComp)):
                lists.update(t for t in _targets(node) if "grad" in t.lower())
        self._values = (counters, lists)
        return self._values


# ------------------------------------------------------------ entry points
def lint_source(source, path="<string>"):
    """The findings for one module's source text (a list of :class:`Finding`)."""
    tree = ast.parse(source, filename=path)
    return _Linter(path, tree).run()


def _python_files(path):
    if os.path.isdir(path):
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.endswith(".py"):
                    yield os.path.join(root, name)
    else:
        yield path


def lint_paths(paths):
    """(findings, errors) for files and directories (``*.py`` below them)."""
    findings, errors = [], []
    for top in paths:
        for path in _python_files(top):
            try:
                with io.open(path, encoding="utf-8") as f:
                    source = f.read()
                findings.extend(lint_source(source, path))
            except (IOError, OSError, SyntaxError, UnicodeDecodeError) as err:
                errors.append("%s: cannot lint: %s" % (path, err))
    return findings, errors


def main(argv, out=None, err=None):
    out = out or sys.stdout
    err = err or sys.stderr
    suggest = "--suggest" in argv
    paths = [a for a in argv if a != "--suggest"]
    if not paths or any(p.startswith("-") for p in paths):
        err.write(USAGE)
        return 2
    findings, errors = lint_paths(paths)
    for finding in findings:
        out.write("%s\n" % finding)
    for error in errors:
        err.write("%s\n" % error)
    if findings and suggest:
        out.write("\n" + SUGGESTION)
    if errors:
        return 2
    return 1 if findings else 0
