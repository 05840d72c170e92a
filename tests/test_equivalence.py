"""K effective steps of N micro-batches == K steps on the concatenated batch.

Each test trains twice in the same process: a single-device big-batch
reference (no accumulator), and the accumulated run (in the mode under test,
with or without MirroredStrategy over two logical CPUs). Weights, optimizer
state and counters are compared value by value.
"""
from __future__ import absolute_import, division, print_function

import numpy as np
import pytest

import gradacc_compat as gac
from gradacc_compat.core import families
from tests import harness as H

K, N, B = 3, 3, 4  # effective steps, micro-batches per step, global micro-batch


def _train(mode, distributed, family, opt_name, steps, batch, x, y, lr=0.1, use_acc=True):
    """Trains on consecutive batches of ``batch`` rows; returns what to compare."""
    with H.Harness(mode, distributed) as h:
        variables = H.make_variables(resource=True if family != "v1" else None)
        opt = H.make_optimizer(family, opt_name, lr)
        acc = gac.GradientAccumulator(steps=steps) if use_acc else None

        def train_step(xb, yb):
            xl, yl = H.replica_slice(xb), H.replica_slice(yb)
            grads = H.gradients(lambda: H.global_mean_loss(variables, xl, yl, batch), variables)
            if acc is None:
                return opt.apply_gradients(list(zip(grads, variables)))
            return acc.step(opt, grads, variables)

        run = h.compile(train_step, x[:batch], y[:batch])
        for start in range(0, len(x), batch):
            run(x[start:start + batch], y[start:start + batch])
        result = {
            "weights": h.values(variables),
            "state": h.values(H.optimizer_state(opt, variables)),
            "iterations": h.value(getattr(opt, "iterations", None)),
        }
        if acc is not None:
            result["acc_iterations"] = h.value(acc.iterations)
            result["acc_micro_step"] = h.value(acc.micro_step)
            result["replicas"] = h.replicas
        return result


@pytest.mark.parametrize("opt_name", H.OPTIMIZERS)
@pytest.mark.parametrize("family", H.FAMILIES)
def test_accumulated_steps_match_big_batch(mode, distributed, family, opt_name):
    available, reason = H.family_available(family)
    if not available:
        pytest.skip(reason)
    x, y = H.make_data(K * N * B)
    adapter = families.adapter_for(H.make_optimizer(family, opt_name))
    if mode == "graph" and not adapter.works_in_graph:
        with pytest.raises(TypeError, match="TF1 graph"):
            _train(mode, distributed, family, opt_name, N, B, x, y)
        return

    reference = _train(mode, False, family, opt_name, 1, N * B, x, y, use_acc=False)
    got = _train(mode, distributed, family, opt_name, N, B, x, y)

    assert got["replicas"] == (H.REPLICAS if distributed else 1)
    H.assert_close(got["weights"], reference["weights"], "weights")
    H.assert_close(got["state"], reference["state"], "optimizer state")
    if reference["iterations"] is not None:
        assert int(got["iterations"]) == int(reference["iterations"]) == K
    assert int(got["acc_iterations"]) == K
    assert int(got["acc_micro_step"]) == 0
    # The run really moved the weights (a test that cannot fail is a defect).
    assert not np.allclose(got["weights"][0], H.initial_values()[0][0])


@pytest.mark.parametrize("family", ["v1", "keras"])
def test_weighted_unequal_micro_batches_and_flush(mode, distributed, family):
    """Micro-batches of 4, 6 and 2 rows (per-micro-batch mean losses,
    weight=rows), then a partial cycle of 6 and 4 rows flushed: equal to two
    big-batch steps on 12 and 10 rows."""
    available, reason = H.family_available(family)
    if not available:
        pytest.skip(reason)
    if mode == "graph" and not families.adapter_for(H.make_optimizer(family, "adam")).works_in_graph:
        pytest.skip("this Keras optimizer family refuses TF1 graphs (tested above)")
    sizes = [4, 6, 2, 6, 4]
    x, y = H.make_data(sum(sizes), seed=3)
    bounds = np.cumsum([0] + sizes)

    def batches(groups):
        return [(x[bounds[a]:bounds[b]], y[bounds[a]:bounds[b]]) for a, b in groups]

    with H.Harness(mode) as h:
        ref_vars = H.make_variables(resource=True if family != "v1" else None)
        ref_opt = H.make_optimizer(family, "adam", 0.05)
        for xb, yb in batches([(0, 3), (3, 5)]):
            def big_step(xb_t, yb_t, rows=len(xb)):
                grads = H.gradients(lambda: H.global_mean_loss(ref_vars, xb_t, yb_t, rows), ref_vars)
                return ref_opt.apply_gradients(list(zip(grads, ref_vars)))
            h.compile(big_step, xb, yb)(xb, yb)
        reference = h.values(ref_vars) + h.values(H.optimizer_state(ref_opt, ref_vars))

    with H.Harness(mode, distributed) as h:
        variables = H.make_variables(resource=True if family != "v1" else None)
        opt = H.make_optimizer(family, "adam", 0.05)
        acc = gac.GradientAccumulator(steps=3)
        for (xb, yb) in batches([(i, i + 1) for i in range(5)]):
            def micro(xb_t, yb_t, rows=len(xb)):
                xl, yl = H.replica_slice(xb_t), H.replica_slice(yb_t)
                local_rows = rows // h.replicas
                # Each replica's mean over its rows, scaled like
                # compute_average_loss; weight = this replica's rows.
                grads = H.gradients(lambda: H.global_mean_loss(variables, xl, yl, local_rows * h.replicas), variables)
                return acc.step(opt, grads, variables, weight=local_rows)
            h.compile(micro, xb, yb)(xb, yb)
        assert int(h.value(acc.micro_step)) == 2
        h.run(lambda: acc.flush(opt))
        assert int(h.value(acc.micro_step)) == 0
        assert int(h.value(acc.iterations)) == 2
        got = h.values(variables) + h.values(H.optimizer_state(opt, variables))
    H.assert_close(got, reference, "weights and optimizer state")


def test_none_gradients_are_skipped(mode, distributed):
    """A variable whose gradient is always None keeps its value and gets no
    optimizer state, exactly as in the big-batch run."""
    x, y = H.make_data(2 * 2 * B)

    def train(steps, batch, dist):
        with H.Harness(mode, dist) as h:
            variables = H.make_variables(extra_unused=True)
            opt = H.make_optimizer("v1", "momentum")
            acc = gac.GradientAccumulator(steps=steps) if steps > 1 else None

            def step(xb, yb):
                xl, yl = H.replica_slice(xb), H.replica_slice(yb)
                grads = H.gradients(lambda: H.global_mean_loss(variables, xl, yl, batch), variables)
                assert grads[-1] is None
                if acc is None:  # the big-batch reference
                    return opt.apply_gradients(list(zip(grads, variables)))
                return acc.step(opt, grads, variables)
            run = h.compile(step, x[:batch], y[:batch])
            for start in range(0, len(x), batch):
                run(x[start:start + batch], y[start:start + batch])
            assert opt.get_slot(variables[-1], "momentum") is None
            return h.values(variables) + h.values(H.optimizer_state(opt, variables))

    reference = train(1, 2 * B, False)
    got = train(2, B, distributed)
    H.assert_close(got, reference, "weights and momentum")
    np.testing.assert_array_equal(got[2], H.initial_values(extra_unused=True)[0][2])


@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
def test_indexed_slices_match_big_batch(mode, distributed, opt_name):
    """Embedding gradients arrive as tf.IndexedSlices; they are scattered into
    the accumulator (no dense micro-batch gradient) and the result is exact."""
    x, y = H.make_data(2 * 2 * B, seed=5)
    seen_types = []

    def train(steps, batch, dist):
        with H.Harness(mode, dist) as h:
            variables = H.make_variables(embedding=True)
            opt = H.make_optimizer("v1", opt_name, 0.05)
            acc = gac.GradientAccumulator(steps=steps) if steps > 1 else None

            def step(xb, yb):
                xl, yl = H.replica_slice(xb), H.replica_slice(yb)
                grads = H.gradients(lambda: H.global_mean_loss(variables, xl, yl, batch), variables)
                seen_types.append(type(grads[2]).__name__)
                if acc is None:  # the big-batch reference
                    return opt.apply_gradients(list(zip(grads, variables)))
                return acc.step(opt, grads, variables)
            run = h.compile(step, x[:batch], y[:batch])
            if mode == "graph" and acc is not None:
                # Rows are written as rows: scattered into the accumulator,
                # or, where the optimizer takes them dense on one device,
                # into a compact slot (compact_rows).
                compact = [v for v in acc.variables if "/compact/" in v.name]
                assert ("ResourceScatterUpdate" if compact else "ResourceScatterAdd") \
                    in H.op_types(h.session.graph)
            for start in range(0, len(x), batch):
                run(x[start:start + batch], y[start:start + batch])
            return h.values(variables) + h.values(H.optimizer_state(opt, variables))

    reference = train(1, 2 * B, False)
    got = train(2, B, distributed)
    assert "IndexedSlices" in seen_types
    H.assert_close(got, reference, "weights and optimizer state")
