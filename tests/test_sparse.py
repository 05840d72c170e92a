"""Sparse gradients (embeddings) are applied as the big batch applies them.

The big batch's gradient of an embedding is a ``tf.IndexedSlices`` holding
exactly the rows its examples looked up. Optimizers that update only the
rows present (Momentum, Ftrl, Adagrad, Adadelta, Keras SGD with momentum)
leave the other rows -- and their slots -- alone. The accumulated gradient
must therefore reach the optimizer as ``tf.IndexedSlices`` over the rows the
cycle touched, not as a dense tensor with zero rows.
"""
from __future__ import absolute_import, division, print_function

import numpy as np
import pytest

import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.core import compact_rows, families
from gradacc_compat.compat import tf
from tests import harness as H

K, N, B = 3, 3, 4  # effective steps, micro-batches per step, global micro-batch
VOCAB = 16  # > N * B: the rows of N micro-batches fit compact slots (compact_rows)
# The ids each effective step looks up: duplicates inside a micro-batch and
# across micro-batches, and rows that an earlier step touched but this one
# does not (there lazy and dense updates part ways).
IDS = [[0, 0, 1, 2], [2, 3, 3, 0], [1, 1, 2, 3],
       [4, 5, 4, 4], [5, 2, 2, 5], [4, 4, 2, 5],
       [6, 0, 6, 6], [7, 7, 0, 6], [6, 6, 6, 0]]

# (family, name): the optimizer, with the settings that make it lazy or
# regularised. Each is compared, weights and slots, with the big batch.
V1 = tf.compat.v1.train
OPTIMIZERS = {
    ("v1", "Momentum"): lambda: V1.MomentumOptimizer(0.1, momentum=0.9),
    ("v1", "Ftrl"): lambda: V1.FtrlOptimizer(0.1, l1_regularization_strength=0.001,
                                             l2_regularization_strength=0.01),
    ("v1", "Adagrad"): lambda: V1.AdagradOptimizer(0.1),
    ("v1", "ProximalAdagrad"): lambda: V1.ProximalAdagradOptimizer(
        0.1, l1_regularization_strength=0.001, l2_regularization_strength=0.001),
    ("v1", "Adadelta"): lambda: V1.AdadeltaOptimizer(1.0),
    ("v1", "Adam"): lambda: V1.AdamOptimizer(0.05),
}
for _family in ("keras", "legacy"):
    for _name, _make in (("SGD-momentum", lambda m: m.SGD(0.1, momentum=0.9)),
                         ("Adagrad", lambda m: m.Adagrad(0.1)),
                         ("Adam", lambda m: m.Adam(0.05))):
        OPTIMIZERS[(_family, _name)] = (lambda f, make: lambda: make(_keras_module(f)))(
            _family, _make)


def _keras_module(family):
    if family == "legacy":
        return compat.keras_legacy_optimizers()
    return compat.keras_module().optimizers


def make_data():
    rng = np.random.RandomState(7)
    ids = np.asarray(IDS, "float32").reshape(-1, 1)
    x = np.concatenate([ids, rng.normal(size=(len(ids), 4))], axis=1).astype("float32")
    y = rng.normal(size=(len(ids), 3)).astype("float32")
    return x, y


def make_variables(resource):
    rng = np.random.RandomState(3)
    values = [rng.normal(size=(4, 3)), rng.normal(size=(3,)), rng.normal(size=(VOCAB, 3))]
    return [tf.compat.v1.Variable(v.astype("float32"), name=n, use_resource=resource)
            for v, n in zip(values, ["kernel", "bias", "embedding"])]


def loss(variables, x, y, global_batch):
    kernel, bias, embedding = variables
    ids = tf.cast(x[:, 0], tf.int32)
    pred = tf.tanh(tf.matmul(x[:, 1:], kernel) + bias + tf.gather(embedding, ids))
    return tf.reduce_sum(tf.square(pred - y)) / float(global_batch)


def sum_duplicates(grad):
    """The big batch's IndexedSlices with duplicate rows summed, as TF's
    optimizers (v1, OptimizerV2, the 2.11-2.15 Keras optimizer) sum them
    before applying. Keras 3 does not: its Adagrad adds each duplicate's
    square (sum of squares, not square of the sum), so its own sparse big
    batch differs from its dense one. The accumulator hands over each row
    once, summed: the reference is that sum."""
    if not isinstance(grad, tf.IndexedSlices):
        return grad
    rows, positions = tf.unique(grad.indices)
    values = tf.math.unsorted_segment_sum(grad.values, positions, tf.shape(rows)[0])
    return tf.IndexedSlices(values, rows, grad.dense_shape)


def _train(mode, distributed, key, steps, batch, x, y):
    with H.Harness(mode, distributed) as h:
        variables = make_variables(resource=True if key[0] != "v1" else None)
        opt = OPTIMIZERS[key]()
        acc = gac.GradientAccumulator(steps=steps) if steps > 1 else None
        kinds = []

        def train_step(xb, yb):
            xl, yl = H.replica_slice(xb), H.replica_slice(yb)
            grads = H.gradients(lambda: loss(variables, xl, yl, batch), variables)
            kinds.append(type(grads[2]).__name__)
            if acc is None:
                grads = [sum_duplicates(g) for g in grads]
                return opt.apply_gradients(list(zip(grads, variables)))
            return acc.step(opt, grads, variables)

        run = h.compile(train_step, x[:batch], y[:batch])
        for start in range(0, len(x), batch):
            run(x[start:start + batch], y[start:start + batch])
        assert set(kinds) == {"IndexedSlices"}, kinds
        ops = H.op_types(h.session.graph) if mode == "graph" else None
        # The bookkeeping beyond one accumulator per variable: row marks.
        marks = acc and [(tuple(v.shape), v.dtype.name) for v in acc.variables
                         if "/rows/" in v.name]
        compact = acc and sorted(tuple(v.shape) for v in acc.variables if "/compact/" in v.name)
        return (h.values(variables), h.values(H.optimizer_state(opt, variables)),
                ops, acc and (acc.sparse_indices, marks, compact))


@pytest.mark.parametrize("key", sorted(OPTIMIZERS), ids=lambda k: "-".join(k))
def test_sparse_rows_match_the_sparse_big_batch(mode, distributed, key):
    family = key[0]
    if family != "v1":
        available, reason = H.family_available(family)
        if not available:
            pytest.skip(reason)
        adapter = families.adapter_for(OPTIMIZERS[key]())
        if mode == "graph" and not adapter.works_in_graph:
            pytest.skip("%s optimizers do not run in a TF1 graph (test_equivalence checks "
                        "that step refuses them)" % adapter.name)
    x, y = make_data()
    ref_weights, ref_state, _, _ = _train(mode, False, key, 1, N * B, x, y)
    try:
        weights, state, ops, sparse = _train(mode, distributed, key, N, B, x, y)
    except Exception as err:  # pylint: disable=broad-except
        if not distributed:
            raise
        _skip_if_tf_itself_fails(lambda: _train(mode, True, key, 1, N * B, x, y), err,
                                 "%s in %s mode" % (key[1], mode))
    # Only the embedding keeps row marks, one float32 per row; none where the
    # optimizer updates every row alike and the apply stays on one device:
    # there its micro-batches' rows go to compact slots, N of B rows (values,
    # indices), with a spill flag and the slot count (shape [1]).
    opt = OPTIMIZERS[key]()
    whole = not distributed and families.adapter_for(opt).updates_every_row(opt)
    slots = [(), (1,), (N, B), (N, B, 3)]
    assert sparse == (([], [], slots) if whole else ([2], [((VOCAB,), "float32")], []))
    H.assert_close(weights, ref_weights, "weights (kernel, bias, embedding)")
    H.assert_close(state, ref_state, "optimizer slots")
    if ops is not None and key == ("v1", "Momentum"):
        # The optimizer received IndexedSlices: its sparse kernel is in the graph.
        assert ops & {"SparseApplyMomentum", "ResourceSparseApplyMomentum"}, sorted(ops)


def _skip_if_tf_itself_fails(run_without_accumulation, err, what):
    """Some TF releases' own optimizers cannot apply sparse gradients under
    MirroredStrategy: Ftrl and ProximalAdagrad colocate slots with a
    MirroredVariable outside replica context in graphs (TF 1.x;
    ProximalAdagrad still on 2.x); TF 2.0's Keras Adagrad calls sparse_read,
    which its MirroredVariable lacks. Skip only where the same training
    without the accumulator, under the same strategy, fails the same way."""
    def last_line(e):  # tf.function errors carry tracebacks of their own
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        return lines[-1] if lines else ""

    try:
        run_without_accumulation()
    except type(err) as own:
        if last_line(own) == last_line(err):
            pytest.skip("TF %s's own %s fails under MirroredStrategy without gradacc_compat: "
                        "%s: %s" % (compat.TF_VERSION_STRING, what, type(own).__name__, own))
    raise err


def test_rows_a_cycle_did_not_touch_keep_their_slots():
    """The property itself, on the v1 Momentum table: after step 2 (ids 2-5)
    the momentum of rows 0 and 1, touched only in step 1, is unchanged."""
    x, y = make_data()
    with H.Harness("graph") as h:
        variables = make_variables(resource=None)
        opt = V1.MomentumOptimizer(0.1, momentum=0.9)
        acc = gac.GradientAccumulator(steps=N)
        xb = tf.compat.v1.placeholder(tf.float32, [B, 5])
        yb = tf.compat.v1.placeholder(tf.float32, [B, 3])
        grads = tf.gradients(loss(variables, xb, yb, B), variables)
        op = acc.step(opt, grads, variables)
        h.initialize()
        slots = []
        for start in range(0, 2 * N * B, B):
            h.session.run(op, {xb: x[start:start + B], yb: y[start:start + B]})
            if (start // B + 1) % N == 0:
                slots.append(h.value(opt.get_slot(variables[2], "momentum")))
        np.testing.assert_array_equal(slots[1][:2], slots[0][:2])
        assert np.abs(slots[1][2:6] - slots[0][2:6]).max() > 1e-3
        assert np.abs(slots[0][:2]).min() > 0  # the rows did move in step 1


def test_a_variable_with_a_dense_gradient_is_applied_dense():
    """A dense gradient for a variable in the cycle: applied dense, as the big
    batch's dense gradient would be (Momentum then decays every row)."""
    x, y = make_data()
    results = []
    for steps, batch in ((1, N * B), (N, B)):
        with H.Harness("graph") as h:
            variables = make_variables(resource=None)
            opt = V1.MomentumOptimizer(0.1, momentum=0.9)
            xb = tf.compat.v1.placeholder(tf.float32, [batch, 5])
            yb = tf.compat.v1.placeholder(tf.float32, [batch, 3])
            grads = tf.gradients(loss(variables, xb, yb, batch), variables)
            grads[2] = tf.convert_to_tensor(grads[2])  # densified by the user
            if steps == 1:
                op = opt.apply_gradients(list(zip(grads, variables)))
            else:
                acc = gac.GradientAccumulator(steps=steps)
                op = acc.step(opt, grads, variables)
            h.initialize()
            for start in range(0, len(x), batch):
                h.session.run(op, {xb: x[start:start + batch], yb: y[start:start + batch]})
            results.append(h.values(variables) + [h.value(opt.get_slot(variables[2], "momentum"))])
    H.assert_close(results[1], results[0], "weights and momentum")


@pytest.mark.parametrize("clearing", ["marks", "whole"])
def test_each_cycle_starts_from_zero_whatever_its_rows_held(mode, clearing):
    """A cycle's first micro-batch clears a sparse variable's accumulator on
    the rows its marks name, not whole. Every row that may hold something
    must be marked: a dense gradient after a sparse one (A, cycle 2), dense
    gradients before the first sparse one (B, cycle 1), and a None first
    micro-batch (A, cycle 4). Without marks ("whole": plain SGD updates every
    row alike, so its accumulator is written whole) the same cycles hold.
    Learning rate 1, no momentum: each cycle moves a variable by minus its
    mean gradient, dense or sparse alike."""
    rows, width = 4, 2
    with H.Harness(mode) as h:
        a = tf.compat.v1.Variable(np.zeros((rows, width), "float32"), name="a", use_resource=True)
        b = tf.compat.v1.Variable(np.zeros((rows, width), "float32"), name="b", use_resource=True)
        opt = (V1.GradientDescentOptimizer(1.0) if clearing == "whole"
               else V1.MomentumOptimizer(1.0, momentum=0.0))  # lazy: marks
        acc = gac.GradientAccumulator(steps=2)
        shape = tf.constant([rows, width], tf.int64)

        def sparse(row, value):
            return tf.IndexedSlices(tf.fill([1, width], value), tf.reshape(row, [1]), shape)

        one, dense = (np.int64(0), np.float32(0)), np.zeros((rows, width), "float32")
        step = {  # (A, B): "s" sparse (row, value), "d" dense, "n" None
            "sd": h.compile(lambda r, v, g: acc.step(opt, [sparse(r, v), g], [a, b]), *(one + (dense,))),
            "ss": h.compile(lambda r, v, r2, v2: acc.step(opt, [sparse(r, v), sparse(r2, v2)], [a, b]),
                            *(one + one)),
            "ds": h.compile(lambda g, r, v: acc.step(opt, [g, sparse(r, v)], [a, b]), *((dense,) + one)),
            "ns": h.compile(lambda r, v: acc.step(opt, [None, sparse(r, v)], [a, b]), *one),
        }
        expected = [np.zeros((rows, width), "float32") for _ in range(2)]
        grads = iter(range(1, 100))
        for cycle in (["sd", "sd"], ["ss", "ds"], ["ss", "ss"], ["ns", "ss"]):
            total = [np.zeros((rows, width), "float32") for _ in range(2)]
            for kind in cycle:
                args = []
                for k, part in enumerate(kind):
                    if part == "s":
                        row, value = next(grads) % rows, float(next(grads))
                        total[k][row] += value
                        args += [np.int64(row), np.float32(value)]
                    elif part == "d":
                        g = np.full((rows, width), float(next(grads)), "float32")
                        total[k] += g
                        args.append(g)
                step[kind](*args)
            for k in range(2):
                expected[k] -= total[k] / 2
            H.assert_close(h.values([a, b]), expected, "weights after cycle %r" % (cycle,))
        assert acc.sparse_indices == ([0, 1] if clearing == "marks" else [])


# ----------------------------------------------------------- Keras model.fit
def fit_embedding_model(family, name, steps, batch, x, y, distributed, save_after=None):
    """Keras fit of the embedding model; returns (weights, optimizer state,
    iterations). ``save_after=(micro_steps, path)``: fit that many batches,
    save, load, and fit the rest with the loaded model."""
    keras = compat.keras_module()
    keras.backend.clear_session()
    strategy = H._mirrored("eager") if distributed else None
    with strategy.scope() if strategy else compat.nullcontext():
        model = H.keras_embedding_model(VOCAB)
        inner = OPTIMIZERS[(family, name)]()
        if steps == 1 and compat.KERAS_FLAVOUR == "keras3" and family == "keras":
            inner = _summing_duplicates(inner)
        model.compile(optimizer=gac.wrap(inner, steps) if steps > 1 else inner, loss="mse")
    inputs = [x[:, :1].astype("int32"), x[:, 1:]]
    fit_batch = compat.keras_fit_batch_size(strategy, batch)

    def fit(model, start, stop):
        model.fit([a[start:stop] for a in inputs], y[start:stop], batch_size=fit_batch,
                  epochs=1, shuffle=False, verbose=0)

    if save_after is None:
        fit(model, 0, len(x))
    else:
        split, path = save_after
        fit(model, 0, split * batch)
        model.save(path)
        model = keras.models.load_model(path, custom_objects=gac.keras_custom_objects())
        fit(model, split * batch, len(x))
    opt = model.optimizer
    state = H.optimizer_state(opt, model.trainable_weights)
    read = H.keras_value
    return model.get_weights(), [read(v) for v in state], int(read(opt.iterations))


def _summing_duplicates(optimizer):
    """A Keras 3 optimizer of ``optimizer``'s class and config that sums
    duplicate rows first (see :func:`sum_duplicates`)."""
    base = type(optimizer)

    class SummingDuplicates(base):
        def apply(self, grads, trainable_variables=None):
            grads = [sum_duplicates(g) for g in grads]
            return super(SummingDuplicates, self).apply(grads, trainable_variables)

    return SummingDuplicates.from_config(optimizer.get_config())


FIT_OPTIMIZERS = [k for k in sorted(OPTIMIZERS) if k[0] != "v1" and k[1] != "Adam"]


@pytest.mark.parametrize("key", FIT_OPTIMIZERS, ids=lambda k: "-".join(k))
def test_fit_with_an_embedding_matches_the_sparse_big_batch(key, distributed):
    family = key[0]
    available, reason = H.family_available(family)
    if not available:
        pytest.skip(reason)
    adapter = families.adapter_for(OPTIMIZERS[key]())
    if not compat.eager_by_default() and (distributed or not adapter.works_in_graph):
        pytest.skip("Keras fit with %s%s needs eager here"
                    % (adapter.name, " under a strategy" if distributed else ""))
    x, y = make_data()
    # As in test_wrap: TF 1.x Keras' distributed fit is not its single-device
    # fit; there the reference is the big batch under the same strategy.
    ref_distributed = distributed and compat.keras_fit_per_replica_batch(H._mirrored("eager"))
    ref = fit_embedding_model(family, key[1], 1, N * B, x, y, ref_distributed)
    try:
        got = fit_embedding_model(family, key[1], N, B, x, y, distributed)
    except Exception as err:  # pylint: disable=broad-except
        if not distributed:
            raise
        _skip_if_tf_itself_fails(
            lambda: fit_embedding_model(family, key[1], 1, N * B, x, y, True), err,
            "%s in fit" % key[1])
    assert got[2] == ref[2] == K
    H.assert_close(got[0], ref[0], "weights (embedding, kernel, bias)")
    H.assert_close(got[1], ref[1], "optimizer state")


@pytest.mark.parametrize("fmt", [".h5", ".keras"])
def test_fit_with_an_embedding_saved_mid_cycle(fmt, tmpdir):
    """Saved with one micro-batch of cycle 2 pending, loaded, trained on:
    the row marks are saved with the accumulators (the loaded wrapper makes
    them up front, from gac_sparse in its config), so the result equals the
    uninterrupted run and the sparse big batch."""
    if compat.keras_module() is None:
        pytest.skip("no tf.keras")
    adapter = families.adapter_for(OPTIMIZERS[("keras", "SGD-momentum")]())
    if not compat.eager_by_default() and not adapter.works_in_graph:
        pytest.skip("this Keras optimizer family refuses TF1 graphs")
    if fmt == ".h5" and compat.KERAS_FLAVOUR == "keras3":
        pytest.skip("Keras 3 cannot read back its own HDF5 compile config; .keras is its format")
    if fmt == ".keras" and (not compat.eager_by_default() or (
            compat.KERAS_FLAVOUR == "keras2" and compat.TF_VERSION < (2, 12, 0))):
        pytest.skip("no .keras format in this Keras (TF %s)" % compat.TF_VERSION_STRING)
    x, y = make_data()
    ref = fit_embedding_model("keras", "SGD-momentum", 1, N * B, x, y, False)
    got = fit_embedding_model("keras", "SGD-momentum", N, B, x, y, False,
                              save_after=(N + 1, str(tmpdir.join("model" + fmt))))
    assert got[2] == ref[2] == K
    H.assert_close(got[0], ref[0], "weights after save, load and training on")
    H.assert_close(got[1][:len(ref[1])], ref[1], "optimizer state")


# ------------------------------------------------------------- compact rows
def _compact_run(h, table, width):
    """A table variable ``a`` (its first gradient sparse, 2 rows: compact
    rows) and a dense one ``b``, SGD with rate 1 (it takes sparse rows dense:
    each cycle moves a variable by minus its weighted mean gradient), and the
    accumulator's calls, each compiled once: ``calls[kind](*args)``."""
    a = tf.compat.v1.Variable(np.zeros((table, width), "float32"), name="a", use_resource=True)
    b = tf.compat.v1.Variable(np.zeros((3,), "float32"), name="b", use_resource=True)
    opt = V1.GradientDescentOptimizer(1.0)
    acc = gac.GradientAccumulator(steps=N)
    shape = tf.constant([table, width], tf.int64)

    def sparse(rows, values):
        return tf.IndexedSlices(values, rows, shape)

    two = (np.zeros(2, "int64"), np.zeros((2, width), "float32"))
    one = (np.zeros(1, "int64"), np.zeros((1, width), "float32"))
    dense, gb, w = np.zeros((table, width), "float32"), np.zeros(3, "float32"), np.float32(1)
    calls = {  # "s": 2 sparse rows (a slot), "r": 1 row, "d": dense, "n": None
        "s": h.compile(lambda r, v, g, w: acc.step(opt, [sparse(r, v), g], [a, b], weight=w),
                       *(two + (gb, w))),
        "r": h.compile(lambda r, v, g, w: acc.step(opt, [sparse(r, v), g], [a, b], weight=w),
                       *(one + (gb, w))),
        "d": h.compile(lambda d, g, w: acc.step(opt, [d, g], [a, b], weight=w), dense, gb, w),
        "n": h.compile(lambda g, w: acc.step(opt, [None, g], [a, b], weight=w), gb, w),
        "acc": h.compile(lambda r, v, g, w: acc.accumulate([sparse(r, v), g], [a, b], weight=w),
                         *(two + (gb, w))),
        "flush": h.compile(lambda: acc.apply_gradients(opt)),
    }
    return a, b, acc, calls


def _compact_cycles(calls, cycles, expected, rng, table, width):
    """Runs ``cycles`` (lists of (kind, weight); "flush" ends one early) and
    updates ``expected`` ([a, b]) with each cycle's weighted mean."""
    for cycle in cycles:
        total, weights = [np.zeros_like(e) for e in expected], 0.0
        for kind, weight in cycle:
            if kind == "flush":
                calls["flush"]()
                continue
            gb = rng.normal(size=3).astype("float32")
            ga = np.zeros((table, width), "float32")
            if kind in ("s", "acc", "r"):
                rows = rng.randint(0, table, size=1 if kind == "r" else 2)
                if kind == "s" and weight == 1:
                    rows[-1] = rows[0]  # a duplicate row
                values = rng.normal(size=(len(rows), width)).astype("float32")
                np.add.at(ga, rows, values)
                calls[kind](rows.astype("int64"), values, gb, np.float32(weight))
            elif kind == "d":
                ga = rng.normal(size=(table, width)).astype("float32")
                calls["d"](ga, gb, np.float32(weight))
            else:
                calls["n"](gb, np.float32(weight))
            total[0] += weight * ga
            total[1] += weight * gb
            weights += weight
        for k in range(2):
            expected[k] -= total[k] / weights


COMPACT_CYCLES = [
    [("s", 1), ("s", 2), ("s", 1)],               # slots only
    [("s", 2), ("d", 1), ("n", 3)],               # a dense spill; a None slot
    [("acc", 1), ("r", 2), ("s", 1)],             # accumulate and another row count spill
    [("s", 2), ("s", 1), ("flush", None)],        # a partial cycle, flushed
    [("acc", 1)] * 4 + [("s", 2)],                # beyond N before the step that applies
    [("s", 1), ("s", 1), ("s", 1)],               # slots again, nothing left over
]


def test_compact_rows_match_the_weighted_mean_whatever_a_cycle_holds(mode):
    """GradientAccumulator.step keeps a table's sparse rows in compact slots
    (one per step); dense gradients, other row counts, None and accumulate()
    calls -- also past N -- go to the dense accumulator. Each cycle must move
    the variables by minus the weighted mean of exactly its gradients,
    computed here in NumPy."""
    table, width = 16, 2
    with H.Harness(mode) as h:
        a, b, acc, calls = _compact_run(h, table, width)
        expected = [np.zeros((table, width), "float32"), np.zeros(3, "float32")]
        rng = np.random.RandomState(5)
        for i, cycle in enumerate(COMPACT_CYCLES):
            _compact_cycles(calls, [cycle], expected, rng, table, width)
            H.assert_close(h.values([a, b]), expected, "weights after cycle %d %r" % (i, cycle))
            assert int(h.value(acc.micro_step)) == 0
        names = sorted(v.name.split(":")[0].split("/", 1)[1] for v in acc.variables
                       if "/compact/" in v.name)
        assert names == ["compact/indices/a", "compact/slots", "compact/spilled/a",
                         "compact/values/a"], names


def test_compact_rows_restore_from_a_mid_cycle_checkpoint(mode, tmpdir):
    """Saved with slots and a spill pending, restored into fresh variables
    and a fresh accumulator (which makes its compact rows on its first step,
    then restored; in a graph, a ``Saver`` restores the session's variables):
    the cycle ends as if never interrupted."""
    table, width = 16, 2
    rng = np.random.RandomState(9)
    expected = [np.zeros((table, width), "float32"), np.zeros(3, "float32")]
    with H.Harness(mode) as h:
        a, b, acc, calls = _compact_run(h, table, width)
        _compact_cycles(calls, COMPACT_CYCLES[:1], expected, rng, table, width)
        pending = [np.zeros_like(e) for e in expected]
        _compact_cycles(calls, [[("s", 2), ("d", 1)]], pending, rng, table, width)
        prefix = str(tmpdir.join("ckpt"))
        if mode == "graph":
            assert [v for v in acc.variables if "/compact/" in v.name]
            path = tf.compat.v1.train.Saver().save(h.session, prefix)
        else:
            path = tf.train.Checkpoint(a=a, b=b, acc=acc).save(prefix)
    with H.Harness(mode) as h:
        a, b, acc, calls = _compact_run(h, table, width)
        if mode == "graph":
            tf.compat.v1.train.Saver().restore(h.session, path)
        else:
            tf.train.Checkpoint(a=a, b=b, acc=acc).restore(path)
        assert int(h.value(acc.micro_step)) == 2
        rest = [np.zeros_like(e) for e in expected]
        _compact_cycles(calls, [[("s", 3)]], rest, rng, table, width)
        # The whole cycle's mean: weights 2, 1 (before saving) and 3 (after).
        for k in range(2):
            expected[k] += (pending[k] * 3 + rest[k] * 3) / 6.0
        H.assert_close(h.values([a, b]), expected, "weights after restoring mid-cycle")


def test_rows_of_unknown_count_stay_in_the_dense_accumulator():
    """No static row count, no slots: the rows are scattered into the dense
    accumulator, and the cycle's mean is still applied."""
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        a = tf.compat.v1.Variable(np.zeros((16, 2), "float32"), use_resource=True)
        acc = gac.GradientAccumulator(steps=2)
        rows = tf.compat.v1.placeholder(tf.int64, [None])
        values = tf.compat.v1.placeholder(tf.float32, [None, 2])
        grad = tf.IndexedSlices(values, rows, tf.constant([16, 2], tf.int64))
        op = acc.step(V1.GradientDescentOptimizer(1.0), [grad], [a])
        assert not [v.name for v in acc.variables if "/compact/" in v.name]
        session.run(tf.compat.v1.global_variables_initializer())
        session.run(op, {rows: [3, 3], values: [[1, 2], [3, 4]]})
        session.run(op, {rows: [5], values: [[2, 2]]})
        expected = np.zeros((16, 2), "float32")
        expected[3], expected[5] = [-2, -3], [-1, -1]
        np.testing.assert_allclose(session.run(a), expected)


def test_compact_rows_keep_ids_in_the_first_gradients_dtype_where_it_reaches_every_row():
    """int32 ids stay int32 (no cast per micro-step), unless the table has
    rows past int32's reach: a later int64 gradient's ids must fit."""
    made = {}

    def make(name, shape, dtype):  # records what would be created
        made[name.split("/")[1]] = (list(shape), tf.as_dtype(dtype))
        return None

    compact_rows.CompactRows(make, "t", [50000, 32], 512, 8, tf.float32, tf.int32)
    assert made["indices"] == ([8, 512], tf.int32) and made["values"] == ([8, 512, 32],
                                                                          tf.float32)
    compact_rows.CompactRows(make, "t", [2 ** 31 + 10, 4], 512, 8, tf.float32, tf.int32)
    assert made["indices"] == ([8, 512], tf.int64)
