"""``gradacc-lint`` where people already lint: the CLI's formats, ``# noqa``,
Python 2 files in a tree, a Python without TensorFlow, the flake8 plugin
and the pre-commit hook (each a subprocess on a temporary tree)."""
from __future__ import absolute_import, division, print_function

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The lint tox env installs flake8 and pre-commit and sets this: there a
#: missing tool is a failure, not a skip.
REQUIRED = os.environ.get("GAC_REQUIRE_LINT_TOOLS", "") == "1"

BUGGY = u'''import tensorflow as tf

sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]
for step, (x, y) in enumerate(dataset):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    for s, g in zip(sums, grads):
        s.assign_add(g)
    if (step + 1) % 4 == 0:
        optimizer.apply_gradients(zip(sums, model.trainable_variables))
'''
APPLY_LINE = 11


def _tree(files):
    folder = tempfile.mkdtemp()
    for name, text in files.items():
        with io.open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(text)
    return folder


def _run(args, cwd=None, env=None):
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                               env=env)
    out, err = process.communicate()
    return process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _lint(*args):
    return _run([sys.executable, "-m", "gradacc_compat.lint"] + list(args), cwd=ROOT)


def test_formats_text_github_json():
    folder = _tree({"loop.py": BUGGY})
    path = os.path.join(folder, "loop.py")
    code, out, _ = _lint(path)
    assert code == 1 and "%s:%d:" % (path, APPLY_LINE) in out and "GAC101" in out
    code, out, _ = _lint("--format=json", path)
    found = json.loads(out)
    assert code == 1 and [(f["line"], f["code"]) for f in found] == [(APPLY_LINE, "GAC101")]
    code, out, _ = _lint("--format=github", path)
    assert code == 1 and out.startswith("::warning file=%s,line=%d," % (path, APPLY_LINE))
    assert "title=GAC101::" in out
    code, _, err = _lint("--format=xml", path)
    assert code == 2 and "usage" in err
    shutil.rmtree(folder)


def test_noqa_silences_one_code_or_all():
    lines = BUGGY.splitlines()
    for comment, silenced in (("  # noqa", True), ("  # noqa: GAC101", True),
                              ("  # noqa: GAC001", True), ("  # noqa: GAC102", False)):
        changed = lines[:]
        changed[APPLY_LINE - 1] += comment
        folder = _tree({"loop.py": u"\n".join(changed) + u"\n"})
        code, out, _ = _lint(os.path.join(folder, "loop.py"))
        assert (code, out == "") == ((0, True) if silenced else (1, False)), comment
        shutil.rmtree(folder)


def test_python2_files_are_read_or_warned_and_leave_the_status_alone():
    py2 = BUGGY + (u"\nprint 'done'\ntry:\n    pass\nexcept ValueError, err:\n    pass\n"
                   u"if err: print 'once'\nprint >> sys.stderr, 'to', err\n"
                   u"def tabbed():\n\tif err:\n\t\tpass\n        \treturn 1\n"
                   u"if not FLAGS.async:\n    run(async=FLAGS.async == 0)\n")
    unparseable = u"def broken(:\n    pass\n"
    folder = _tree({"a_py2.py": py2, "b_broken.py": unparseable})
    code, out, err = _lint(folder)
    assert code == 1, (out, err)  # the findings decide, not the file it could not read
    assert "a_py2.py:%d:" % APPLY_LINE in out
    assert "b_broken.py: not parsed" in err
    folder_clean = _tree({"b_broken.py": unparseable})
    code, out, err = _lint(folder_clean)
    assert (code, out) == (0, "") and "not parsed" in err
    shutil.rmtree(folder)
    shutil.rmtree(folder_clean)


ODD = u'''from helpers import append, extend
append(x)
extend(items, more)
(lambda f: f)(len)(append)
opt.apply_gradients(*pairs)
opt.apply_gradients(grads_and_vars=zip(*[iter([])] * 2))
for (a, (b, c)) in []:
    a += b
while True:
    break
'''


#: Shapes of TensorFlow's and Keras's own sources, no accumulation: a
#: metric that zeroes its own variables, a list of variables extended.
LIBRARY = u'''import tensorflow as tf


class MeanMetric(tf.keras.metrics.Metric):
    def reset_state(self):
        for v in self.variables:
            v.assign(tf.zeros(v.shape, dtype=v.dtype))


class Optimizer(object):
    def minimize(self, loss, var_list=None):
        var_list += tf.compat.v1.get_collection("streaming_model_ports")
        grads_and_vars = self.compute_gradients(loss, var_list=var_list)
        return self.apply_gradients(grads_and_vars)

    def compute_gradients(self, loss, var_list):
        return list(zip(tf.gradients(loss, var_list), var_list))
'''


def test_library_code_that_does_not_accumulate_is_clean():
    from gradacc_compat import lint
    assert lint.lint_source(LIBRARY, "library.py") == []


def test_never_crashes_on_odd_shapes_or_on_this_repository():
    """Shapes lint met in the wild that once crashed it (a plain function
    named ``append``, met in TensorFlow's own sources), and every Python
    file of this repository; a file this Python cannot parse is a warning."""
    from gradacc_compat import lint
    lint.lint_source(ODD, "odd.py")
    findings, errors, warnings = lint.lint_paths([ROOT])
    assert not errors, errors


class _Written(object):
    """A stream that keeps what is written (str on Python 2 and 3)."""

    def __init__(self):
        self.text = ""

    def write(self, text):
        self.text += text


def test_a_file_lint_fails_inside_is_an_error_and_the_others_are_still_linted(monkeypatch):
    """An internal failure on one file of a tree names that file, exits 2,
    and leaves the findings of the other files (here: a failure made by
    hand, standing for a shape no rule has met)."""
    from gradacc_compat.lint import rules
    folder = tempfile.mkdtemp()
    try:
        for name in ("a_bad.py", "b_good.py"):
            with io.open(os.path.join(folder, name), "w", encoding="utf-8") as f:
                f.write(u"" + BUGGY)
        real = rules.lint_source

        def failing(source, path="<string>"):
            if path.endswith("a_bad.py"):
                raise AttributeError("'Name' object has no attribute 'value'")
            return real(source, path)
        monkeypatch.setattr(rules, "lint_source", failing)
        out, err = _Written(), _Written()
        code = rules.main([folder], out=out, err=err)
        assert code == 2
        assert "a_bad.py: lint failed inside (AttributeError" in err.text
        assert "b_good.py:" in out.text and "a_bad.py:" not in out.text
    finally:
        shutil.rmtree(folder)


def test_runs_without_tensorflow_and_never_imports_it():
    """In a process where ``import tensorflow`` fails, lint a 2,000-line
    file; TensorFlow is never imported."""
    folder = _tree({"big.py": (BUGGY + u"\n") * 160})
    code = ("import sys, time, runpy\n"
            "sys.modules['tensorflow'] = None\n"
            "sys.argv = ['gradacc-lint', %r]\n"
            "start = time.time()\n"
            "try:\n"
            "    runpy.run_module('gradacc_compat.lint', run_name='__main__')\n"
            "except SystemExit as done:\n"
            "    status = done.code\n"
            "assert sys.modules['tensorflow'] is None\n"
            "sys.stderr.write('lint took %%.2f s\\n' %% (time.time() - start))\n"
            "sys.exit(status)\n" % os.path.join(folder, "big.py"))
    status, out, err = _run([sys.executable, "-c", code], cwd=ROOT)
    assert status == 1, err
    assert out.count("GAC101") == 160
    assert "lint took" in err  # the figure, for the record (no timed assertion)
    shutil.rmtree(folder)


def _tool(module):
    try:
        __import__(module)
    except ImportError:
        if REQUIRED:
            raise
        pytest.skip("%s is not installed here (the lint tox env has it)" % module)


def _installed_plugin():
    """flake8 finds plugins through installed entry points."""
    try:
        from importlib import metadata
    except ImportError:
        return False
    return any(e.name == "GAC" for e in metadata.entry_points().select(group="flake8.extension"))


def test_flake8_plugin_reports_and_honours_noqa():
    _tool("flake8")
    if not _installed_plugin():
        if REQUIRED:
            raise AssertionError("gradacc_compat's flake8 entry point is not installed")
        pytest.skip("gradacc_compat is not installed with its entry points here")
    lines = BUGGY.splitlines()
    quiet = lines[:]
    quiet[APPLY_LINE - 1] += "  # noqa: GAC101"
    folder = _tree({"loop.py": BUGGY, "quiet.py": u"\n".join(quiet) + u"\n"})
    code, out, err = _run([sys.executable, "-m", "flake8", "--select=GAC", "loop.py",
                           "quiet.py"], cwd=folder)
    assert code == 1, (out, err)
    assert out.strip().splitlines() == [out.strip().splitlines()[0]]
    assert out.startswith("./loop.py:%d:" % APPLY_LINE) or out.startswith(
        "loop.py:%d:" % APPLY_LINE), out
    assert " GAC101 " in out
    shutil.rmtree(folder)


def test_pre_commit_hook_runs_on_a_temporary_repository():
    _tool("pre_commit")
    folder = _tree({"loop.py": BUGGY, "clean.py": u"x = 1\n"})
    config = (u"repos:\n- repo: %s\n  rev: %s\n  hooks:\n  - id: gradacc-lint\n"
              % (ROOT, _head()))
    with io.open(os.path.join(folder, ".pre-commit-config.yaml"), "w", encoding="utf-8") as f:
        f.write(config)
    env = dict(os.environ, PRE_COMMIT_HOME=os.path.join(folder, ".cache"))
    for command in (["git", "init", "-q"], ["git", "add", "-A"]):
        assert _run(command, cwd=folder)[0] == 0
    code, out, err = _run([sys.executable, "-m", "pre_commit", "run", "--all-files"],
                          cwd=folder, env=env)
    assert code == 1, (out, err)
    assert "loop.py:%d:" % APPLY_LINE in out and "GAC101" in out, out
    shutil.rmtree(folder)


def _head():
    code, out, _ = _run(["git", "rev-parse", "HEAD"], cwd=ROOT)
    if code != 0:
        pytest.skip("not a git checkout")
    return out.strip()
