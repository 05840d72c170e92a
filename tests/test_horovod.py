"""Horovod (the py310-tf211-horovod tox env builds it; elsewhere skipped).

Horovod's DistributedOptimizer all-reduces where gradients are computed;
its apply_gradients applies whatever it is given. Handed to the
accumulator's own apply, each rank would apply its own accumulated gradient
and the ranks would silently diverge (measured with two ranks on TF 2.11:
0.790 vs 0.849 after two effective steps), so it is refused, before any
state changes, with the orders that work.
"""
from __future__ import absolute_import, division, print_function

import os
import sys

import numpy as np
import pytest

import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.compat import tf

from tests import harness as H
from tests import multiprocess
from tests.workers import horovod_worker as W

hvd_keras = pytest.importorskip("horovod.tensorflow.keras")
hvd_tf = pytest.importorskip("horovod.tensorflow")


@pytest.fixture(scope="module", autouse=True)
def _init():
    hvd_tf.init()  # one rank: no horovodrun needed


def _optimizers():
    yield "keras", lambda: hvd_keras.DistributedOptimizer(
        compat.keras_legacy_optimizers().SGD(0.1))
    yield "v1", lambda: hvd_tf.DistributedOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(0.1))


@pytest.mark.parametrize("family", ["keras", "v1"])
def test_accumulator_refuses_horovod_optimizer_and_changes_nothing(family):
    make = dict(_optimizers())[family]
    variables = H.make_variables(resource=True)
    acc = gac.GradientAccumulator(steps=2)
    grads = [tf.ones_like(v) for v in variables]
    with pytest.raises(TypeError, match="Horovod's DistributedOptimizer .* ranks would "
                                        "diverge"):
        acc.step(make(), grads, variables)
    with pytest.raises(TypeError, match="gac.wrap\\(hvd.DistributedOptimizer"):
        acc.apply_gradients(make())
    assert int(acc.micro_step.numpy()) == 0 and acc.gradients is None
    np.testing.assert_array_equal(variables[0].numpy(), H.initial_values()[0][0])


@pytest.mark.multiprocess
def test_wrap_of_horovod_optimizer_with_fit_two_ranks_one_allreduce_per_step(tmpdir):
    """gac.wrap(hvd.DistributedOptimizer(SGD(momentum)), N) + fit over two
    ranks equals one process's big batch over both ranks' data, and runs
    exactly one Horovod all-reduce per effective step (counted, eagerly)."""
    out = str(tmpdir.join("rank%d.npz"))
    horovodrun = os.path.join(os.path.dirname(sys.executable), "horovodrun")
    multiprocess.run_command([horovodrun, "-np", "2", "-H", "localhost:2", "--gloo",
                              "--network-interfaces", "lo", sys.executable, "-m",
                              "tests.workers.horovod_worker", out], deadline=300)
    results = [np.load(out % rank) for rank in range(2)]
    x, y = W.data()
    model = H.keras_dense_model()
    model.compile(optimizer=compat.keras_legacy_optimizers().SGD(0.1, momentum=0.9), loss="mse")
    model.fit(x, y, batch_size=W.N * W.B, epochs=1, shuffle=False, verbose=0)
    for r in results:
        H.assert_close(multiprocess.saved_weights(r), model.get_weights(), "weights")
        assert int(r["iterations"]) == W.K
        assert int(r["reductions"]) == W.K  # not K * N
