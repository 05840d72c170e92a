"""Process-wide set-up (before any TF op) and the mode/strategy fixtures.

Process-wide choices are tox factors (TF version, TF1 eager switch, Keras
flavour, GPU build); in-process ones are fixtures: execution mode (eager,
tf.function, TF1 graph/session) and strategy (default, MirroredStrategy over
two logical CPUs).
"""
from __future__ import absolute_import, division, print_function


import pytest

from gradacc_compat import compat
from gradacc_compat.compat import tf

from tests import harness

# Must run before TensorFlow initialises its devices.
if compat.TF1:
    if compat.env_flag("GAC_TF1_EAGER"):
        tf.compat.v1.enable_eager_execution(config=compat.tf1_session_config(harness.REPLICAS))
else:
    compat.split_cpu(harness.REPLICAS)

tf.get_logger().setLevel("ERROR")


def pytest_sessionstart(session):
    if compat.env_flag("GAC_REQUIRE_GPU"):
        gpus = [d for d in compat.visible_devices() if "GPU" in d.upper()]
        if not gpus:
            raise pytest.UsageError(
                "GAC_REQUIRE_GPU is set (a gpu tox env) but TensorFlow %s sees no GPU "
                "(devices: %s). A GPU job must not pass with everything skipped."
                % (compat.TF_VERSION_STRING, compat.visible_devices()))


def pytest_report_header(config):
    return "tensorflow %s, keras %s, %s by default" % (
        compat.TF_VERSION_STRING, compat.KERAS_FLAVOUR,
        "eager" if compat.eager_by_default() else "graph")


@pytest.fixture(params=harness.MODES)
def mode(request):
    harness.skip_unless_mode_available(request.param)
    return request.param


@pytest.fixture(params=["default", "mirrored"])
def distributed(request):
    return request.param == "mirrored"


@pytest.fixture
def env(mode, distributed):
    """A Harness in ``mode`` under the strategy, entered; yields it."""
    with harness.Harness(mode, distributed) as h:
        yield h
