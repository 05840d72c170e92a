"""A transform of the accumulated gradient (``clip_global_norm=``,
``transform=``): what TF1 code does between ``compute_gradients`` and
``apply_gradients`` -- BERT clips by the global norm there -- acts once per
effective step, on the big batch's gradient, not on each micro-batch."""
from __future__ import absolute_import, division, print_function

import pytest

import gradacc_compat as gac
from gradacc_compat.compat import tf
from tests import harness as H

K, N, B = 2, 3, 4
CLIP = 0.5
SCALE = 20.0  # a loss large enough that every gradient is clipped


def _loss(variables, x, y, batch):
    return SCALE * H.global_mean_loss(variables, x, y, batch)


def _big_batch(mode, family, x, y):
    """BERT's pattern on the big batch: gradients, clip_by_global_norm, apply."""
    with H.Harness(mode) as h:
        variables = H.make_variables(resource=True)
        opt = H.make_optimizer(family, "adam", 0.05)

        def step(xb, yb):
            grads = H.gradients(lambda: _loss(variables, xb, yb, N * B), variables)
            grads, _ = tf.clip_by_global_norm(grads, CLIP)
            return opt.apply_gradients(list(zip(grads, variables)))

        run = h.compile(step, x[:N * B], y[:N * B])
        for i in range(0, len(x), N * B):
            run(x[i:i + N * B], y[i:i + N * B])
        return h.values(variables + H.optimizer_state(opt, variables))


@pytest.mark.parametrize("how", ["clip_global_norm", "transform"])
@pytest.mark.parametrize("family", ["v1", "keras"])
def test_clipping_acts_on_the_accumulated_gradient(mode, distributed, family, how):
    H.skip_unless_family_runs(family, mode)
    x, y = H.make_data(K * N * B, seed=53)
    expected = _big_batch(mode, family, x, y)

    def clip(grads_and_vars):
        grads, variables = zip(*grads_and_vars)
        return list(zip(tf.clip_by_global_norm(list(grads), CLIP)[0], variables))

    option = {"clip_global_norm": CLIP} if how == "clip_global_norm" else {"transform": clip}
    with H.Harness(mode, distributed) as h:
        variables = H.make_variables(resource=True)
        opt = gac.wrap(H.make_optimizer(family, "adam", 0.05), N, **option)

        def step(xb, yb):
            # The TF1 pattern, one line changed: no clip here, the wrapper's.
            grads = H.gradients(lambda: _loss(variables, H.replica_slice(xb),
                                              H.replica_slice(yb), B), variables)
            return opt.apply_gradients(list(zip(grads, variables)))

        run = h.compile(step, x[:B], y[:B])
        for i in range(0, len(x), B):
            run(x[i:i + B], y[i:i + B])
        got = h.values(variables + H.optimizer_state(opt, variables))
    H.assert_close(got, expected, "weights and Adam state", rtol=1e-5, atol=1e-6)


def test_bad_transforms_are_refused():
    with pytest.raises(ValueError, match="not both"):
        gac.GradientAccumulator(2, transform=lambda gv: gv, clip_global_norm=1.0)
    with pytest.raises(TypeError, match="transform=3"):
        gac.GradientAccumulator(2, transform=3)
    with pytest.raises(ValueError, match="clip_global_norm=-1"):
        gac.wrap(tf.compat.v1.train.AdamOptimizer(0.1), 2, clip_global_norm=-1)
    acc = gac.GradientAccumulator(2, clip_global_norm=1.5)
    assert acc.get_config()["clip_global_norm"] == 1.5
    assert gac.GradientAccumulator.from_config(acc.get_config()).transform is not None
