"""pytest fixtures for projects that test their own accumulation.

Registered through the ``pytest11`` entry point, and inert unless used:
a top-level module, so loading it imports neither gradacc_compat nor
TensorFlow, and changes nothing. A
test asks for what it needs:

* ``gac_strategy`` -- a MirroredStrategy over two logical CPUs (TF 1.14 to
  the newest; TF1 graphs run it in a session made with ``gac_session_config``);
* ``gac_runner`` -- ``gradacc_compat.tools.testing.Runner``: run a step eagerly, in
  ``tf.function`` or in a TF1 graph, with or without that strategy;
* ``gac_assert_matches_big_batch`` -- ``gac.verify`` as an assertion;
* ``gac_facts`` -- TF version, Keras flavour, modes ... to branch on;
* ``gac_record`` / ``gac_replay`` -- ``gac.record`` into, and ``gac.replay``
  (as an assertion) against, a golden run ``<gac_golden_dir>/NAME.npz``: the
  oldest TF env of a tox matrix records, every newer one replays.

TensorFlow splits the CPU into logical devices only before its runtime
starts, so a suite that needs them (TF2) sets, in its pytest ini file,
``gac_logical_cpus = 2``: the plugin then splits the CPU at start-up. TF 1.x
eager suites set ``gac_tf1_eager = true`` to enable eager execution with two
CPUs, which must be TensorFlow's first call.
"""
from __future__ import absolute_import, division, print_function

import os

import pytest


def pytest_addoption(parser):
    parser.addini("gac_logical_cpus", "gradacc_compat: logical CPUs to make at start-up "
                  "(0: none; 2 for gac_strategy on TF2)", default="0")
    parser.addini("gac_golden_dir", "gradacc_compat: where gac_record writes and gac_replay "
                  "reads golden runs (relative to the rootdir; the environment variable "
                  "GAC_GOLDEN_DIR wins)", default="golden")
    parser.addini("gac_tf1_eager", "gradacc_compat: enable TF 1.x eager execution at "
                  "start-up, with gac_logical_cpus CPUs", default="false")


def pytest_configure(config):
    cpus = int(config.getini("gac_logical_cpus") or 0)
    tf1_eager = str(config.getini("gac_tf1_eager")).lower() in ("1", "true", "yes")
    if not cpus and not tf1_eager:
        return  # inert: TensorFlow is not even imported
    from gradacc_compat import compat
    from gradacc_compat.tools import testing
    if compat.TF1:
        if tf1_eager:
            compat.tf.compat.v1.enable_eager_execution(
                config=compat.tf1_session_config(max(cpus, 1)))
        return  # TF1 graphs take the device count per session
    why = testing.setup_logical_cpus(cpus) if cpus else None
    if why:
        raise pytest.UsageError("gac_logical_cpus = %d: %s" % (cpus, why))


@pytest.fixture(scope="session")
def gac_facts():
    from gradacc_compat.tools import testing
    return testing.facts()


@pytest.fixture(scope="session")
def gac_session_config():
    """The ``ConfigProto`` a TF1 session needs for ``gac_strategy``'s CPUs."""
    from gradacc_compat import compat
    from gradacc_compat.tools import testing
    return compat.tf1_session_config(testing.REPLICAS)


@pytest.fixture(scope="session")
def gac_strategy():
    """MirroredStrategy over two logical CPUs, one per test session (several
    strategies in one eager process can collide in their collectives)."""
    from gradacc_compat import compat
    from gradacc_compat.tools import testing
    why = testing.setup_logical_cpus(testing.REPLICAS)
    if why:
        pytest.fail("gac_strategy needs %d logical CPUs: %s. Set `gac_logical_cpus = %d` "
                    "(and on TF 1.x eager `gac_tf1_eager = true`) in your pytest ini file."
                    % (testing.REPLICAS, why, testing.REPLICAS), pytrace=False)
    return testing.mirrored("eager" if compat.eager_by_default() else "graph")


@pytest.fixture
def gac_runner():
    from gradacc_compat.tools import testing
    return testing.Runner


@pytest.fixture
def gac_assert_matches_big_batch():
    from gradacc_compat.tools import verification
    return verification.assert_matches_big_batch


def _golden_path(config, name):
    directory = os.environ.get("GAC_GOLDEN_DIR") or config.getini("gac_golden_dir") or "golden"
    directory = os.path.join(str(config.rootdir), directory)
    return os.path.join(directory, name if name.endswith(".npz") else name + ".npz")


@pytest.fixture
def gac_record(request):
    """``gac_record(NAME, **spec)``: ``gac.record`` into the golden directory
    (made if missing); returns the recorded trace."""
    from gradacc_compat.tools import migration

    def record(name, **kwargs):
        path = _golden_path(request.config, name)
        if not os.path.isdir(os.path.dirname(path)):
            os.makedirs(os.path.dirname(path))
        return migration.record(path, **kwargs)
    return record


@pytest.fixture
def gac_replay(request):
    """``gac_replay(NAME, **spec)``: ``gac.replay`` against the golden run;
    fails the test with the table when the two trainings part, or when no
    golden run was recorded yet. Returns the comparison."""
    from gradacc_compat.tools import migration

    def replay(name, **kwargs):
        path = _golden_path(request.config, name)
        if not os.path.exists(path):
            pytest.fail("no golden run %s: record it first (gac_record(%r, ...) in the "
                        "recording environment, e.g. the oldest TF of your tox matrix, which "
                        "the replaying ones depend on)" % (path, name), pytrace=False)
        comparison = migration.replay(path, print_fn=None, **kwargs)
        if not comparison.passed:
            pytest.fail("the training parts from the golden run %s:\n%s" % (path, comparison),
                        pytrace=False)
        return comparison
    return replay
