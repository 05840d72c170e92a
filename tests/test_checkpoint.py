"""A checkpoint taken mid-cycle restores the pending gradients and counters
exactly: train 2 micro-steps, save, restore into FRESH variables, optimizer
and accumulator, finish -- equal to the uninterrupted big-batch run."""
from __future__ import absolute_import, division, print_function

import os

import numpy as np
import pytest

import gradacc_compat as gac
from gradacc_compat.compat import tf
from tests import harness as H

STEPS, B, TOTAL = 4, 4, 2 * 4 * 4   # 2 effective steps of 4 micro-batches of 4


class _Run(object):
    """``how``: "accumulator" (GradientAccumulator.step) or "wrap" (gac.wrap)."""

    def __init__(self, h, family, steps, batch, how="accumulator"):
        self.h = h
        self.batch = batch
        self.variables = H.make_variables(resource=True)
        self.opt = H.make_optimizer(family, "adam", 0.05)
        self.acc = None
        if steps > 1 and how == "wrap":
            self.opt = gac.wrap(self.opt, steps)
        elif steps > 1:
            self.acc = gac.GradientAccumulator(steps=steps)
        x, y = H.make_data(TOTAL, seed=7)
        self.x, self.y = x, y
        self._step = h.compile(self._train_step, x[:batch], y[:batch])

    def _train_step(self, xb, yb):
        xl, yl = H.replica_slice(xb), H.replica_slice(yb)
        grads = H.gradients(lambda: H.global_mean_loss(self.variables, xl, yl, self.batch),
                            self.variables)
        if self.acc is None:
            return self.opt.apply_gradients(list(zip(grads, self.variables)))
        return self.acc.step(self.opt, grads, self.variables)

    @property
    def accumulator(self):
        return self.acc if self.acc is not None else self.opt.accumulator

    def train(self, first, last):
        for i in range(first, last):
            self._step(self.x[i * self.batch:(i + 1) * self.batch],
                       self.y[i * self.batch:(i + 1) * self.batch])

    def result(self):
        return (self.h.values(self.variables)
                + self.h.values(H.optimizer_state(self.opt, self.variables)))


def _checkpoint(run):
    kwargs = dict(("v%d" % i, v) for i, v in enumerate(run.variables))
    if run.acc is not None:  # a wrapped optimizer tracks its own accumulator
        kwargs["accumulator"] = run.acc
    return tf.train.Checkpoint(optimizer=run.opt, **kwargs)


@pytest.mark.parametrize("how", ["accumulator", "wrap"])
@pytest.mark.parametrize("family", ["v1", "keras"])
def test_mid_cycle_checkpoint_restores_exactly(mode, distributed, family, how, tmpdir):
    H.skip_unless_family_runs(family, mode)
    with H.Harness(mode) as h:
        reference = _Run(h, family, 1, STEPS * B)
        reference.train(0, 2)
        expected = reference.result()

    prefix = os.path.join(str(tmpdir), "ckpt")
    with H.Harness(mode, distributed) as h:
        first = _Run(h, family, STEPS, B, how)
        first.train(0, 2)            # two micro-batches pending
        if mode == "graph":
            saver = tf.compat.v1.train.Saver()
            path = saver.save(h.session, prefix)
        else:
            path = _checkpoint(first).save(prefix)
        pending = h.value(first.accumulator.gradients[0])
        assert np.abs(pending).sum() > 0

    with H.Harness(mode, distributed) as h:
        second = _Run(h, family, STEPS, B, how)
        if mode == "graph":
            tf.compat.v1.train.Saver().restore(h.session, path)
        else:
            _checkpoint(second).restore(path)
        second.train(2, 3)
        # One more micro-step after the restore: 2 restored + 1.
        assert int(h.value(second.accumulator.micro_step)) == 3
        assert int(h.value(second.accumulator.iterations)) == 0
        second.train(3, 2 * STEPS)
        assert int(h.value(second.accumulator.iterations)) == 2
        got = second.result()
    H.assert_close(got, expected, "weights and optimizer state after restore")
