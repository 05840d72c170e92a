"""Property tests: random cycles against a NumPy reference.

For random sequences of micro-steps (dense, sparse with duplicate rows and
None gradients, with and without weights), flushes and resets, with a
random ``steps``: after every operation the variables equal a NumPy model
of the contract (each applied update is the weighted mean over the cycle,
a variable with no gradient in a cycle is left out), the counters follow
the golden rules, and ``acc.gradients`` reads what is pending. In eager,
``tf.function`` and a TF1 graph. hypothesis is not installed for Python 2.7
(its last release for 2.7 is too old to use): skipped there.
"""
from __future__ import absolute_import, division, print_function

import numpy as np
import pytest

import gradacc_compat as gac
from gradacc_compat.compat import tf
from tests import harness as H

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

LR = 0.5
ROWS = 6  # the table's rows (variable 1); variable 0 is a dense vector of 3

micro_step = st.tuples(
    st.just("micro"),
    st.sampled_from([None, "dense"]),                       # variable 0's gradient
    st.sampled_from([None, "dense", "sparse"]),             # variable 1's gradient
    st.lists(st.integers(0, ROWS - 1), min_size=3, max_size=3),  # sparse rows (repeats)
    st.sampled_from([None, 0.5, 1.0, 3.0]),                 # weight
    st.integers(0, 2 ** 16))                                # seed of the values
program = st.tuples(st.integers(1, 3), st.lists(
    st.one_of(micro_step, st.just(("flush",)), st.just(("reset",))), min_size=1, max_size=8))


class _Model(object):
    """The contract in NumPy."""

    def __init__(self, steps, initial):
        self.steps, self.values = steps, [v.copy() for v in initial]
        self.pending, self.iterations, self.seen = [], 0, False

    def micro(self, grads, weight):
        self.pending.append((grads, 1.0 if weight is None else weight))
        if len(self.pending) == self.steps:
            self.apply()

    def sums(self):
        out = [np.zeros_like(v) for v in self.values]
        for grads, w in self.pending:
            for i, g in enumerate(grads):
                if g is not None:
                    out[i] += w * g
        return out

    def apply(self):
        if not self.pending:
            return
        total = sum(w for _, w in self.pending)
        for i, s in enumerate(self.sums()):
            if any(g[i] is not None for g, _ in self.pending):
                self.values[i] -= LR * s / total
        self.pending, self.iterations = [], self.iterations + 1

    def reset(self):
        self.pending = []


def _values(kind0, kind1, rows, seed):
    rng = np.random.RandomState(seed)
    g0 = rng.normal(size=3).astype("float32") if kind0 else None
    g1 = None
    if kind1 == "dense":
        g1 = rng.normal(size=(ROWS, 2)).astype("float32")
    elif kind1 == "sparse":
        values = rng.normal(size=(len(rows), 2)).astype("float32")
        g1 = np.zeros((ROWS, 2), "float32")
        np.add.at(g1, np.array(rows), values)  # duplicates summed
        return g0, g1, values
    return g0, g1, None


@pytest.mark.parametrize("mode", H.MODES)
def test_random_cycles_match_the_numpy_contract(mode):
    H.skip_unless_mode_available(mode)

    @hypothesis.settings(max_examples=15, deadline=None, derandomize=True,
                         suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(program)
    def check(case):
        steps, ops = case
        initial = [np.linspace(-1, 1, 3).astype("float32"),
                   np.arange(ROWS * 2, dtype="float32").reshape(ROWS, 2) / 10.0]
        model = _Model(steps, initial)
        with H.Harness(mode) as h:
            variables = [tf.compat.v1.Variable(v, use_resource=True) for v in initial]
            h.initialize()
            opt = H.make_optimizer("v1", "sgd", LR)
            acc = gac.GradientAccumulator(steps=steps)
            compiled = {}

            def runner(kind0, kind1, weighted):
                key = (kind0, kind1, weighted)
                if key not in compiled:
                    def fn(g0, g1, values, rows, w):
                        grads = [g0 if kind0 else None,
                                 tf.IndexedSlices(values, rows, tf.constant([ROWS, 2]))
                                 if kind1 == "sparse" else g1 if kind1 else None]
                        return acc.step(opt, grads, variables, weight=w if weighted else None)
                    compiled[key] = h.compile(
                        fn, np.zeros(3, "float32"), np.zeros((ROWS, 2), "float32"),
                        np.zeros((3, 2), "float32"), np.zeros(3, "int32"), np.float32(1))
                return compiled[key]

            for op in ops:
                if op[0] == "flush":
                    if model.seen:
                        h.run(lambda: acc.flush(opt))
                        model.apply()
                elif op[0] == "reset":
                    if model.seen:
                        h.run(acc.reset)
                    model.reset()
                else:
                    _, kind0, kind1, rows, weight, seed = op
                    if not kind0 and not kind1 and not model.seen:
                        continue  # refused: tested in test_errors
                    g0, g1, values = _values(kind0, kind1, rows, seed)
                    runner(kind0, kind1, weight is not None)(
                        g0 if g0 is not None else np.zeros(3, "float32"),
                        g1 if g1 is not None else np.zeros((ROWS, 2), "float32"),
                        values if values is not None else np.zeros((3, 2), "float32"),
                        np.array(rows, "int32"), np.float32(weight or 1.0))
                    model.seen = True
                    model.micro([g0, g1], weight)
                what = "after %r" % (op,)
                H.assert_close(h.values(variables), model.values, what, rtol=1e-5, atol=1e-5)
                if model.seen:
                    assert int(h.value(acc.micro_step)) == len(model.pending), what
                    assert int(h.value(acc.iterations)) == model.iterations, what
                    H.assert_close(h.values(acc.gradients), model.sums(), "pending " + what,
                                   rtol=1e-5, atol=1e-5)

    check()
