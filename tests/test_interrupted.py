"""Interrupted training resumes exactly: a run that ends itself in the
middle of a cycle (``os._exit``, as a killed job: no cleanup, no final
save) and is resumed from its newest checkpoint in a new process ends with
the weights and optimizer state of a run that was never interrupted.
Each run is a process of its own (tests/workers/interrupted.py), started
by tests/multiprocess.py's rules: own process group, deadline, killed by
PID."""
from __future__ import absolute_import, division, print_function

import numpy as np
import pytest

from gradacc_compat import compat
from tests import harness as H
from tests import multiprocess
from tests.workers import interrupted

pytestmark = pytest.mark.multiprocess

SCENARIOS = ["loop-eager", "loop-function", "graph-saver", "monitored", "estimator",
             "fit-checkpoint", "fit-backup"]


def _skip_unless_possible(scenario):
    eager = compat.eager_by_default()
    if scenario.startswith("loop") and not eager:
        pytest.skip("a custom eager loop needs eager execution (TF2 or the TF1 eager factor)")
    if scenario == "loop-function" and not compat.HAS_TF_FUNCTION:
        pytest.skip("no tf.function here")
    if scenario == "estimator" and not compat.HAS_ESTIMATOR:
        pytest.skip("TF %s ships no estimators" % compat.TF_VERSION_STRING)
    if scenario.startswith("fit"):
        if compat.keras_module() is None:
            pytest.skip("no tf.keras")
        if compat.TF_VERSION < (2, 4, 0):
            pytest.skip("fit's checkpoints of the wrapper mid-cycle are tested from TF 2.4 "
                        "(test_wrap's save/load covers the older releases' formats)")
    if scenario == "fit-backup" and interrupted.backup_and_restore() is None:
        pytest.skip("this Keras has no BackupAndRestore")


def _run(scenario, folder, run):
    multiprocess.run_command(
        [multiprocess.sys.executable, "-m", "tests.workers.interrupted", scenario, folder, run],
        deadline=240, expect_exit=17 if run == "stop" else 0)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_resumed_run_equals_the_uninterrupted_one(scenario, tmpdir):
    _skip_unless_possible(scenario)
    full, cut = tmpdir.mkdir("full"), tmpdir.mkdir("cut")
    _run(scenario, str(full), "full")
    _run(scenario, str(cut), "stop")
    assert not cut.join("stop.npz").check()  # it ended before saving a result
    _run(scenario, str(cut), "resume")
    expected = multiprocess.saved_weights(np.load(str(full.join("full.npz"))))
    got = multiprocess.saved_weights(np.load(str(cut.join("resume.npz"))))
    H.assert_close(got, expected, "%s: weights, optimizer state and counters" % scenario,
                   rtol=1e-6, atol=1e-7)
