"""Parameter servers (between-graph replication): the accumulator lives on
its worker, never on a ps task, and each worker applies the mean of its own
N micro-batches."""
from __future__ import absolute_import, division, print_function

import numpy as np
import pytest

from gradacc_compat.compat import tf

from tests import harness as H
from tests import multiprocess
from tests.workers import parameter_server as P

pytestmark = pytest.mark.multiprocess


def _run(tmpdir, workers, placement="soft"):
    outs = [str(tmpdir.join("worker%d.npz" % i)) for i in range(workers)]
    multiprocess.run_cluster(
        "tests.workers.parameter_server",
        lambda task_type, i: [outs[i] if task_type == "worker" else "-", placement],
        workers=workers, ps=1)
    return [np.load(o) for o in outs]


def _on_worker(result, index):
    devices = [str(d) for d in result["devices"]]
    assert devices and all("/job:worker/task:%d" % index in d for d in devices), devices
    assert not any("/job:ps" in d for d in devices), devices


@pytest.mark.parametrize("placement", ["soft", "strict"])
def test_one_ps_one_worker_equals_the_big_batch(tmpdir, placement):
    """"strict": no allow_soft_placement, as the README's example (it
    failed on TF 2.4-2.11: the apply's ops inside the cond could not be
    colocated with the variables on the ps)."""
    (result,) = _run(tmpdir, 1, placement)
    x, y = P.data(0)
    reference = H.big_batch_weights("graph", lambda: tf.compat.v1.train.AdamOptimizer(0.1),
                                    x, y, P.N * P.B)
    H.assert_close(multiprocess.saved_weights(result), reference, "weights")
    assert int(result["global_step"]) == P.K
    _on_worker(result, 0)


def test_one_ps_two_workers_count_every_apply_and_keep_their_own_accumulators(tmpdir):
    results = _run(tmpdir, 2)
    for index, result in enumerate(results):
        _on_worker(result, index)
    # Asynchronous workers: each applies K times, global_step counts all of
    # them; the last to finish sees them all.
    assert max(int(r["global_step"]) for r in results) == 2 * P.K
