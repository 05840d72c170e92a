"""``gradacc-lint PATH...`` (``python -m gradacc_compat.lint``): find the
mistakes of hand-rolled gradient accumulation.

Reads Python sources with the standard library's ``ast`` (nothing is run,
TensorFlow is not imported) and follows each accumulator to the applies
that consume it, in any function, method, ``tf.cond`` branch or lambda of
the file. Each finding is ``file:line:col: CODE message``, where ``CODES``
below says what the big batch would do instead.

Exit status: 1 when something was found, 0 when clean, 2 on bad usage or an
unreadable file. A file that does not parse (Python 2 syntax this Python
cannot read) is a warning on stderr and leaves the status alone. ``# noqa``
or ``# noqa: GAC101`` on a line silences it.
"""
from __future__ import absolute_import, division, print_function

import ast
import io
import json
import os
import re
import sys

from gradacc_compat.lint import hand_rolled, python_state, wrapped
from gradacc_compat.lint.flow import Index
from gradacc_compat.lint.ast_helpers import self_named

__all__ = ["CODES", "Finding", "findings_of_tree", "lint_source", "lint_paths", "main",
           "SUGGESTION"]

USAGE = ("usage: gradacc-lint [--suggest] [--format=text|github|json] PATH [PATH ...]\n"
         "       (python -m gradacc_compat.lint, python -m gradacc_compat lint)\n")

#: code -> (what goes wrong, what the big batch does, the gradacc_compat fix)
CODES = {
    "GAC101": ("accumulated gradients `%s` are applied as a sum, never divided by the number "
               "of micro-batches", "the big batch applies their mean",
               "divide by N, or acc = gac.GradientAccumulator(N) (applies the mean)"),
    "GAC102": ("apply_gradients runs on every micro-batch that accumulates `%s`%s",
               "the big batch applies once every N", "acc.step(optimizer, grads, vars)"),
    "GAC103": ("`%s` zeroes the model's own weights, not the accumulators",
               "the big batch keeps its weights", "reset the accumulators (gac resets itself)"),
    "GAC104": ("%s reduces across replicas or workers on every micro-step",
               "the big batch all-reduces once per step",
               "accumulate replica-local, reduce once (gac.GradientAccumulator / gac.wrap("
               "hvd.DistributedOptimizer(opt), N))"),
    "GAC105": ("`%s` is Python state changed inside the tf.function `%s`, which runs it once, "
               "when tracing: later calls see a stale value", "the count moves every step",
               "keep counters and sums in tf.Variables (gac.GradientAccumulator keeps both)"),
    "GAC106": ("`%s` clips each micro-batch's gradients before %s",
               "the big batch clips the accumulated mean once",
               "gac.GradientAccumulator(N, clip_global_norm=...) or gac.wrap(opt, N, "
               "clip_global_norm=...)"),
    "GAC107": ("`%s` advances on every micro-step beside %s that applies once every N",
               "the big batch's schedules and Adam's bias correction count effective steps",
               "advance it when the apply runs (gac's apply returns whether it applied)"),
    "GAC108": ("`%s` is divided by N twice: %s",
               "the big batch divides once", "divide the loss or the sum, not both"),
    "GAC109": ("the apply runs at irregular points: %s",
               "the big batch applies after every N micro-batches",
               "apply when (step + 1) % N == 0, or acc.step(...)"),
    "GAC110": ("the micro-batches after the last apply of `%s` are %s (the loop ends "
               "without applying them)",
               "the big batch trains on every example",
               "apply the partial cycle (acc.flush(optimizer)) or drop it on purpose"),
    "GAC111": ("`%s` runs inside tf.cond in replica context: under MirroredStrategy the "
               "optimizer's all-reduce cannot run in a branch", "the big batch applies in a "
               "plain step", "gac.GradientAccumulator / gac.wrap (no cond around the apply)"),
}
#: Earlier releases' numbers (``# noqa: GAC001`` keeps working).
ALIASES = dict(("GAC00%d" % n, "GAC10%d" % n) for n in range(1, 8))

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


class Finding(object):
    """One mistake: ``path:line:col: code message``."""

    def __init__(self, path, line, code, message, col=0):
        self.path, self.line, self.code, self.message, self.col = path, line, code, message, col

    def __str__(self):
        return "%s:%d:%d: %s %s" % (self.path, self.line, self.col + 1, self.code, self.message)

    def __repr__(self):
        return "Finding(%r, %d, %r)" % (self.path, self.line, self.code)

    def as_dict(self):
        return {"path": self.path, "line": self.line, "col": self.col + 1, "code": self.code,
                "message": self.message}


def message(code, args):
    what, big, fix = CODES[code]
    return "%s; %s. Fix: %s" % (what % args, big, fix)


_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z0-9, ]+))?", re.I)


def _silenced(lines, finding):
    if not 0 < finding.line <= len(lines):
        return False
    match = _NOQA.search(lines[finding.line - 1])
    if not match:
        return False
    codes = match.group("codes")
    if not codes:
        return True
    named = set(ALIASES.get(c.strip().upper(), c.strip().upper()) for c in codes.split(","))
    return finding.code in named


def _parse(source, path):
    """The module's tree. When the source needs it, Python 2 is read on
    the same lines: ``print x`` and ``print >>f, x`` (also after ``if
    ...:``, and over several lines) as the assignment ``__print__ = x``
    and ``__print__ = f, x``; ``except E, e`` as ``except E as e``; a tab
    in an indent to the next multiple of 8, as Python 2 counts it; the
    names ``async`` and ``await`` (``FLAGS.async``, ``async=1``) as
    ``async_`` and ``await_``."""
    try:
        return ast.parse(source, filename=path)
    except SyntaxError:
        fixed = re.sub(r"^(\s*(?:(?:if|elif|else|for|while|with)\b[^#\n]*?:\s*)?)print"
                       r"(?:\s*>>|\s+(?![\s(=]))", r"\1__print__ = ", source, flags=re.M)
        fixed = re.sub(r"^[ \t]*\t[ \t]*", lambda m: m.group(0).expandtabs(8), fixed,
                       flags=re.M)
        fixed = re.sub(r"^(\s*except\s+[\w.() ,]+?),\s*(\w+)\s*:", r"\1 as \2:", fixed,
                       flags=re.M)
        fixed = re.sub(r"(?<=\.)(async|await)\b|\b(async|await)(?=\s*=[^=])",
                       lambda m: (m.group(1) or m.group(2)) + "_", fixed)
        return ast.parse(fixed, filename=path)


def findings_of_tree(tree, source, path="<string>", noqa=True):
    """The findings for one parsed module (``noqa``: honour ``# noqa``)."""
    findings = []

    def report(node, code, *args):
        findings.append(Finding(path, node.lineno, code, message(code, args),
                                getattr(node, "col_offset", 0)))

    index = Index(self_named(tree))
    hand_rolled.check(index, report, source)
    python_state.check(index, report)
    wrapped.check(index, report)
    lines = source.splitlines()
    unique = {}
    for finding in findings:
        if not (noqa and _silenced(lines, finding)):
            unique.setdefault((finding.line, finding.code), finding)
    return sorted(unique.values(), key=lambda f: (f.line, f.code))


def lint_source(source, path="<string>"):
    """The findings for one module's source text (a list of :class:`Finding`)."""
    return findings_of_tree(_parse(source, path), source, path)


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
    """(findings, errors, warnings) for files and directories (``*.py``)."""
    findings, errors, warnings = [], [], []
    for top in paths:
        for path in _python_files(top):
            try:
                with io.open(path, encoding="utf-8", errors="replace") as f:
                    source = f.read()
            except (IOError, OSError) as err:
                errors.append("%s: cannot lint: %s" % (path, err))
                continue
            try:
                findings.extend(lint_source(source, path))
            except (SyntaxError, ValueError) as err:
                warnings.append("%s: not parsed (%s); nothing checked in it" % (path, err))
            except Exception as err:  # noqa: BLE001 - one file's failure, said; the rest linted
                errors.append("%s: lint failed inside (%s: %s); the other files are checked. "
                              "Please report it with this file." % (
                                  path, type(err).__name__, err))
    return findings, errors, warnings


def _format(findings, style):
    if style == "json":
        return json.dumps([f.as_dict() for f in findings], indent=1) + "\n"
    if style == "github":
        return "".join("::warning file=%s,line=%d,col=%d,title=%s::%s\n"
                       % (f.path, f.line, f.col + 1, f.code, f.message.replace("\n", " "))
                       for f in findings)
    return "".join("%s\n" % f for f in findings)


def main(argv=None, out=None, err=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout
    err = err or sys.stderr
    suggest = "--suggest" in argv
    style = "text"
    paths = []
    for arg in argv:
        if arg.startswith("--format="):
            style = arg.split("=", 1)[1]
        elif arg != "--suggest":
            paths.append(arg)
    if not paths or any(p.startswith("-") for p in paths) or style not in (
            "text", "github", "json"):
        err.write(USAGE)
        return 2
    findings, errors, warnings = lint_paths(paths)
    out.write(_format(findings, style) if findings or style == "json" else "")
    for line in errors + warnings:
        err.write("%s\n" % line)
    if findings and suggest and style == "text":
        out.write("\n" + SUGGESTION)
    if errors:
        return 2
    return 1 if findings else 0
