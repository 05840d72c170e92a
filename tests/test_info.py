"""show_versions / `python -m gradacc_compat info` / import without TF."""
from __future__ import absolute_import, division, print_function

import re
import subprocess
import sys

import six

import gradacc_compat as gac
from gradacc_compat import compat


def test_show_versions_reports_what_a_bug_report_needs():
    out = six.StringIO()
    gac.show_versions(file=out)
    text = out.getvalue()
    assert compat.TF_VERSION_STRING in text
    assert gac.__version__ in text
    assert "adapter for tf.compat.v1.train.Optimizer : v1-train" in re.sub(r" +", " ", text)
    assert ("eager by default" if compat.eager_by_default() else "graph by default") in text


def test_module_info_command():
    proc = subprocess.Popen([sys.executable, "-m", "gradacc_compat", "info"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    assert six.ensure_str(out).count(compat.TF_VERSION_STRING) >= 1


def test_unknown_command_is_usage_error():
    proc = subprocess.Popen([sys.executable, "-m", "gradacc_compat", "frobnicate"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = proc.communicate()
    assert proc.returncode == 2
    assert "usage" in six.ensure_str(err)


#: A fresh Python imports the package and lints a line with it.
_LINT_FIRST = ("import sys\n"
               "import gradacc_compat as gac\n"
               "from gradacc_compat import lint\n"
               "assert lint.lint_source('x = 1') == []\n")


def _python(code):
    """``(status, stdout, stderr)`` of ``code`` run by a fresh Python."""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    out, err = proc.communicate()
    return proc.returncode, six.ensure_str(out), six.ensure_str(err)


def test_import_without_tensorflow_says_what_to_install():
    """The package imports (so that its lint runs); what needs TensorFlow
    raises the ImportError that says what to install."""
    status, out, err = _python(
        "import sys; sys.modules['tensorflow'] = None\n" + _LINT_FIRST +
        "try:\n    gac.GradientAccumulator(4)\nexcept ImportError as e:\n"
        "    print(e); sys.exit(0)\nsys.exit(1)\n")
    assert status == 0, err[-2000:]
    assert "pip install tensorflow" in out


def test_lint_does_not_import_the_installed_tensorflow():
    """Where TensorFlow is installed, importing the package and its lint
    leaves it unimported (on Python 2.7 too); the package's names load it
    on first use."""
    status, _, err = _python(
        _LINT_FIRST +
        "assert 'tensorflow' not in sys.modules, 'imported with the package'\n"
        "from gradacc_compat import GradientAccumulator\n"
        "assert GradientAccumulator is gac.GradientAccumulator\n"
        "assert 'tensorflow' in sys.modules\n"
        "assert gac.wrap.__name__ == 'wrap'\n")
    assert status == 0, err[-2000:]


def test_release_tuple_counts_prereleases_as_their_release():
    assert compat.release_tuple("2.16.0rc0") == (2, 16, 0)
    assert compat.release_tuple("2.17.0-dev20240501") == (2, 17, 0)
    assert compat.release_tuple("1.14.0") == (1, 14, 0)
    assert compat.release_tuple("2.1") == (2, 1, 0)


def test_demo_command_trains_and_matches_the_big_batch():
    proc = subprocess.Popen([sys.executable, "-m", "gradacc_compat", "demo"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    text = six.ensure_str(out)
    assert proc.returncode == 0, (text, six.ensure_str(err))
    assert "effective batch 64; 100 micro-steps, 25 effective steps" in text
    match = re.search(r"max \|w_accumulated - w_big_batch\| = (\S+) over 25 effective steps: OK",
                      text)
    assert match and float(match.group(1)) <= 1e-5, text
