"""The package's structure, as facts a test can check: the accumulator is
used through its documented interface only, and the package imports in one
direction (no circles)."""
from __future__ import absolute_import, division, print_function

import ast
import io
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "gradacc_compat")


def _sources():
    for root, _, files in os.walk(PACKAGE):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                with io.open(path, encoding="utf-8") as f:
                    yield os.path.relpath(path, ROOT), f.read()


#: The accumulator's own modules: the class and its parts.
OWN = ("accumulator.py", "accumulator_apply.py", "accumulator_checks.py", "accumulator_ops.py",
       "accumulator_state.py", "accumulator_writes.py")


def _accumulator_members():
    text = ""
    for name in OWN:
        with io.open(os.path.join(PACKAGE, "core", name), encoding="utf-8") as f:
            text += f.read()
    return set(re.findall(r"self\.(_[a-z]\w*)\b", text)) | set(
        re.findall(r"^    def (_[a-z]\w*)\(", text, re.M))


def test_no_module_touches_an_underscore_member_of_the_accumulator():
    """Wrappers and engines use build / state_variables / pending_count /
    wrapped_step / apply_pending (the accumulator's docstring)."""
    members = _accumulator_members()
    assert "_accums" in members and "_cycle" in members  # the scan finds them
    found = []
    for path, text in _sources():
        if os.path.basename(path) in OWN and os.path.basename(os.path.dirname(path)) == "core":
            continue
        for name in sorted(members):
            for match in re.finditer(r"\b(acc|accumulator|_gac_accumulator|"
                                     r"_gac_get_accumulator\(\))\.%s\b" % name, text):
                found.append("%s: %s" % (path, match.group(0)))
    assert not found, found


def _imports(text, modules):
    """The package's modules a source imports (at any depth): ``from pkg
    import mod`` is an arrow to ``pkg.mod``; ``from pkg import name`` (not
    a module) an arrow to ``pkg``."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gradacc_compat"):
            for alias in node.names:
                sub = node.module + "." + alias.name
                found.add(sub if sub in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("gradacc_compat"))
    return found


def test_no_module_is_over_its_size():
    """One screen or two of a class, a module a responsibility: no module of
    the package over ~350 lines, except those named here (each with its
    reason; the list only shrinks)."""
    allowed = {}  # none left: keep it so
    over = []
    for path, text in _sources():
        relative = os.path.relpath(path, "gradacc_compat").replace(os.sep, "/")
        size = len(text.splitlines())
        if size > 350 and relative not in allowed:
            over.append("%s: %d lines" % (relative, size))
    assert not over, over


def test_no_import_circles():
    modules = {}
    for path, text in _sources():
        name = path[:-3].replace(os.sep, ".")
        if name.endswith(".__init__"):
            name = name[:-len(".__init__")]
        modules[name] = text
    graph = dict((name, set(n for n in _imports(text, modules) if n in modules and n != name))
                 for name, text in modules.items())
    # A package's __init__ re-exports its modules; an arrow into a package
    # is an arrow into its __init__ only.
    circles = []
    for start in graph:
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in graph[node]:
                if nxt == start and len(path) > 1 and not all(
                        p.startswith(start + ".") or p == start for p in path):
                    circles.append(" -> ".join(path + [nxt]))
                elif nxt not in path and len(path) < 6:
                    stack.append((nxt, path + [nxt]))
    assert not circles, sorted(set(circles))[:10]


#: The package's floors, from the ground up: a module imports only from its
#: own floor or below. ``lint`` stands apart (it imports nothing else of the
#: package but its version, so that it runs without TensorFlow).
FLOORS = [("gradacc_compat._version", "gradacc_compat.compat", "gradacc_compat.keras_classes"),
          ("gradacc_compat.core",),
          ("gradacc_compat.wrapping", "gradacc_compat.distributed"),
          ("gradacc_compat.tools",),
          # the package's face, __main__, the documented paths, and the
          # benchmark, which measures the public API as a user calls it
          ("gradacc_compat", "gradacc_compat.bench")]


def _floor(module):
    for number, floor in enumerate(FLOORS):
        if any(module == f or module.startswith(f + ".") for f in floor if f != "gradacc_compat"):
            return number
    return len(FLOORS) - 1


def test_no_import_runs_back_up_and_lint_stands_apart():
    modules = {}
    for path, text in _sources():
        name = path[:-3].replace(os.sep, ".")
        modules[name[:-len(".__init__")] if name.endswith(".__init__") else name] = text
    up, lint = [], []
    for name, text in sorted(modules.items()):
        for target in _imports(text, modules):
            if name.startswith("gradacc_compat.lint"):
                if not target.startswith(("gradacc_compat.lint", "gradacc_compat._version")):
                    lint.append("%s -> %s" % (name, target))
            elif _floor(target) > _floor(name):
                up.append("%s -> %s" % (name, target))
        if name.startswith("gradacc_compat.lint") and re.search(r"^\s*(import|from) tensorflow",
                                                                text, re.M):
            lint.append("%s imports TensorFlow" % name)
    assert not up, up
    assert not lint, lint


def test_versions_are_sniffed_in_compat_only():
    """Version numbers and symbol probes live in ``gradacc_compat.compat``;
    the rest uses its named facts."""
    sniff = re.compile(r"tf\.__version__|\bTF_VERSION\b\s*[<>=]|release_tuple\(|"
                       r"hasattr\((tf|tensorflow)\b")
    found = ["%s: %s" % (path, m.group(0)) for path, text in _sources()
             if not path.startswith(os.path.join("gradacc_compat", "compat"))
             for m in sniff.finditer(text)]
    assert not found, found
