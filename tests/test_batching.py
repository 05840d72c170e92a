"""gac.effective_batch_size / steps_for_effective_batch: the vocabulary."""
from __future__ import absolute_import, division, print_function

import pytest

import gradacc_compat as gac

# (per-replica batch, replicas, steps, effective batch)
TABLE = [(32, 1, 1, 32), (32, 2, 4, 256), (8, 4, 3, 96), (1, 1, 7, 7)]


class _Strategy(object):  # what the helpers read of a tf.distribute strategy
    def __init__(self, replicas):
        self.num_replicas_in_sync = replicas


@pytest.mark.parametrize("batch, replicas, steps, effective", TABLE)
def test_effective_batch_and_its_inverse(batch, replicas, steps, effective):
    assert gac.effective_batch_size(batch, replicas, steps) == effective
    assert gac.effective_batch_size(batch, _Strategy(replicas), steps) == effective
    assert gac.steps_for_effective_batch(effective, batch, replicas) == steps


def test_an_effective_batch_that_does_not_split_is_refused_with_the_nearest_ones():
    with pytest.raises(ValueError) as info:
        gac.steps_for_effective_batch(100, 32, replicas=2)
    message = str(info.value)
    assert "100" in message and "64 and 128" in message


@pytest.mark.parametrize("bad", [0, -1, 2.5, "4", None, True])
def test_bad_counts_say_what_was_received(bad):
    with pytest.raises(ValueError, match="Received: steps=%r" % (bad,)):
        gac.effective_batch_size(32, 1, bad)
