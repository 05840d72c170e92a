"""``SyncReplicasOptimizer`` and ``gac.wrap`` do not compose, in either
order; each is refused with an error that says what to use instead.

Wrapped inside it, the wrapper advances ``global_step`` once per effective
step, and SyncReplicasOptimizer drops every gradient tagged with an older
step as stale: its workers wait forever for a full batch (seen here: a
session.run with a deadline times out). Wrapping it, the wrapper would run
its token queue only inside the apply's cond. (SyncReplicasOptimizer alone,
with replicas_to_aggregate = N on one worker, is not exact either: its
queued tokens tag micro-batches with a stale step, and it drops them.)
"""
from __future__ import absolute_import, division, print_function

import numpy as np
import pytest

import gradacc_compat as gac
from gradacc_compat.compat import tf
from tests import harness as H

V1 = tf.compat.v1.train


def _sync(optimizer):
    return V1.SyncReplicasOptimizer(optimizer, replicas_to_aggregate=1, total_num_replicas=1)


def _says_what_to_use(err):
    text = str(err.value)
    assert "SyncReplicasOptimizer" in text and "stale" in text, text
    assert "gac.wrap(optimizer, steps) without it" in text, text
    assert "MultiWorkerMirroredStrategy" in text, text


def test_wrapping_a_sync_replicas_optimizer_is_refused():
    with pytest.raises(TypeError) as err:
        gac.wrap(_sync(V1.GradientDescentOptimizer(0.1)), 2)
    _says_what_to_use(err)
    assert "gac.wrap received" in str(err.value)


def test_a_sync_replicas_optimizer_around_a_wrapper_is_refused_untouched():
    with H.Harness("graph"):
        variable = tf.compat.v1.Variable(np.ones((3,), "float32"), name="w")
        step = V1.get_or_create_global_step()
        wrapper = gac.wrap(V1.GradientDescentOptimizer(0.1), 2)
        loss = tf.reduce_sum(tf.square(variable))
        sync = _sync(wrapper)
        with pytest.raises(TypeError) as err:
            sync.minimize(loss, global_step=step)
        _says_what_to_use(err)
        # (What SyncReplicasOptimizer built before calling the wrapper is
        # TF's; it would warn at exit that it was never run.)
        getattr(getattr(sync, "ready_for_local_init_op", None), "mark_used", lambda: None)()
        assert wrapper.accumulator.gradients is None  # nothing was built
