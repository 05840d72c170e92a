"""Golden step tables: after each micro-step, the accumulator, the counters
and the variable are exactly what the table says, for every optimizer family,
every mode, with and without MirroredStrategy."""
from __future__ import absolute_import, division, print_function

import inspect
import re
import sys

import numpy as np
import pytest

import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.core import families
from gradacc_compat.compat import tf
from tests import harness as H

LR = 0.5
# (gradient fed, acc.gradients after, micro_step after, iterations after, variable after)
# acc.gradients reads what is pending: zeros once a cycle is applied (the
# accumulator variables themselves are overwritten lazily, by the next
# cycle's first micro-batch).
GOLDEN = [
    ([1.0, 2.0], [1.0, 2.0], 1, 0, [0.0, 0.0]),
    ([3.0, 4.0], [4.0, 6.0], 2, 0, [0.0, 0.0]),
    ([5.0, 6.0], [0.0, 0.0], 0, 1, [-1.5, -2.0]),    # applies mean [3, 4] * 0.5
    ([2.0, 2.0], [2.0, 2.0], 1, 1, [-1.5, -2.0]),    # overwritten, not added
]
# flush() of the partial cycle: mean [2, 2] over ONE micro-batch, not three.
AFTER_FLUSH = ([0.0, 0.0], 0, 2, [-2.5, -3.0])


@pytest.mark.parametrize("family", H.FAMILIES)
def test_golden_table(env, family):
    available, reason = H.family_available(family)
    if not available:
        pytest.skip(reason)
    opt = H.make_optimizer(family, "sgd", LR)
    if env.mode == "graph" and not families.adapter_for(opt).works_in_graph:
        pytest.skip("this Keras optimizer family refuses TF1 graphs (tested in test_equivalence)")
    var = tf.compat.v1.Variable(np.zeros(2, "float32"), name="w", use_resource=True)
    acc = gac.GradientAccumulator(steps=3)

    def micro(grad):
        # Each replica feeds grad / replicas: the replicas' sum is `grad`.
        return acc.step(opt, [grad / float(env.replicas)], [var])

    run = env.compile(micro, np.zeros(2, "float32"))
    for grad, accum, micro_step, iterations, value in GOLDEN:
        run(np.array(grad, "float32"))
        _assert_row(env, acc, var, accum, micro_step, iterations, value)

    env.run(lambda: acc.flush(opt))
    _assert_row(env, acc, var, *AFTER_FLUSH)
    env.run(lambda: acc.flush(opt))  # nothing pending: a no-op
    _assert_row(env, acc, var, *AFTER_FLUSH)
    if hasattr(opt, "iterations"):
        assert int(env.value(opt.iterations)) == 2


def _assert_row(env, acc, var, accum, micro_step, iterations, value):
    np.testing.assert_allclose(env.value(acc.gradients[0]), accum, rtol=0, atol=1e-6)
    assert int(env.value(acc.micro_step)) == micro_step
    assert int(env.value(acc.iterations)) == iterations
    np.testing.assert_allclose(env.value(var), value, rtol=0, atol=1e-6)


def test_gradients_read_what_is_pending(env):
    """As the HF transformers and OpenNMT-tf accumulators users migrate from
    do: after reset() or an apply, acc.gradients reads zeros (before the
    reset became lazy-only it read the old sum, [4, 4] here), in every mode
    and under MirroredStrategy (the replicas' sum)."""
    var = tf.compat.v1.Variable(np.zeros(2, "float32"), name="w", use_resource=True)
    opt = H.make_optimizer("v1", "sgd", 1.0)
    acc = gac.GradientAccumulator(steps=3)
    run = env.compile(lambda g: acc.accumulate([g / float(env.replicas)], [var]),
                      np.zeros(2, "float32"))

    def pending():
        return env.value(acc.gradients[0])

    run(np.array([1.0, 1.0], "float32"))
    run(np.array([3.0, 3.0], "float32"))
    np.testing.assert_allclose(pending(), [4.0, 4.0])
    env.run(acc.reset)
    np.testing.assert_allclose(pending(), [0.0, 0.0])
    run(np.array([2.0, 2.0], "float32"))
    np.testing.assert_allclose(pending(), [2.0, 2.0])   # not [6, 6]: the old sum is gone
    env.run(lambda: acc.apply_gradients(opt))
    np.testing.assert_allclose(pending(), [0.0, 0.0])
    np.testing.assert_allclose(env.value(var), [-2.0, -2.0])


def test_steps_one_applies_every_call(mode):
    with H.Harness(mode) as h:
        var = tf.compat.v1.Variable(np.zeros(2, "float32"), name="w", use_resource=True)
        opt = H.make_optimizer("v1", "sgd", 1.0)
        acc = gac.GradientAccumulator(steps=1)
        run = h.compile(lambda g: acc.step(opt, [g], [var]), np.zeros(2, "float32"))
        run(np.array([1.0, 2.0], "float32"))
        run(np.array([1.0, 1.0], "float32"))
        np.testing.assert_allclose(h.value(var), [-2.0, -3.0])
        assert int(h.value(acc.iterations)) == 2


def test_sum_reduction_and_reset(mode):
    with H.Harness(mode) as h:
        var = tf.compat.v1.Variable(np.zeros(2, "float32"), name="w", use_resource=True)
        opt = H.make_optimizer("v1", "sgd", 1.0)
        acc = gac.GradientAccumulator(steps=2, reduction="sum")
        run = h.compile(lambda g: acc.step(opt, [g], [var]), np.zeros(2, "float32"))
        run(np.array([1.0, 2.0], "float32"))
        h.run(acc.reset)  # drops the pending [1, 2]
        assert int(h.value(acc.micro_step)) == 0
        run(np.array([1.0, 1.0], "float32"))
        run(np.array([2.0, 3.0], "float32"))
        np.testing.assert_allclose(h.value(var), [-3.0, -4.0])  # the sum, not the mean


def test_none_on_a_cycles_first_micro_batch_drops_the_last_cycles_sum(mode):
    """The accumulator keeps a cycle's sum after its apply; a None gradient
    on the next cycle's first micro-batch must still start that cycle from
    zero: mean of (nothing, [1, 1]) over 2 micro-batches is [0.5, 0.5], not
    ([4, 6] + [1, 1]) / 2."""
    with H.Harness(mode) as h:
        var = tf.compat.v1.Variable(np.zeros(2, "float32"), name="w", use_resource=True)
        opt = H.make_optimizer("v1", "sgd", 1.0)
        acc = gac.GradientAccumulator(steps=2)
        run = h.compile(lambda g: acc.step(opt, [g], [var]), np.zeros(2, "float32"))
        skip = h.compile(lambda g: acc.step(opt, [None], [var]), np.zeros(2, "float32"))
        run(np.array([1.0, 2.0], "float32"))
        run(np.array([3.0, 4.0], "float32"))
        np.testing.assert_allclose(h.value(var), [-2.0, -3.0])
        skip(np.zeros(2, "float32"))
        run(np.array([1.0, 1.0], "float32"))
        np.testing.assert_allclose(h.value(var), [-2.5, -3.5])


def test_float16_gradients_accumulate_in_float32(mode):
    """2048 + 1 + 1 + 1 is 2048 in float16 (spacing 2 there) but 2051 in the
    float32 accumulator; the apply casts back to the variable's float16."""
    with H.Harness(mode) as h:
        var = tf.compat.v1.Variable(np.zeros(1, "float16"), name="w16", use_resource=True)
        opt = H.make_optimizer("v1", "sgd", 1.0)
        acc = gac.GradientAccumulator(steps=5)
        run = h.compile(lambda g: acc.step(opt, [tf.cast(g, tf.float16)], [var]),
                        np.zeros(1, "float32"))
        for g in (2048.0, 1.0, 1.0, 1.0):
            run(np.array([g], "float32"))
        assert acc.gradients[0].dtype.base_dtype == tf.float32
        np.testing.assert_array_equal(h.value(acc.gradients[0]), [2051.0])
        run(np.array([1.0], "float32"))           # 2052 / 5 = 410.4 applied
        assert h.value(var).dtype == np.float16
        np.testing.assert_allclose(h.value(var), [-410.4], rtol=1e-3)


def test_in_a_one_device_function_the_apply_is_a_call_not_lowered():
    """TF 2 lowers a tf.cond's branches into the function's graph, where an
    untaken branch still passes a dead signal through each of its ops: the
    apply's ~100 ops on every micro-step. The apply's cond is kept as one
    call (the golden tables check what it computes); the writes' cond, a
    few ops, stays lowered."""
    if not hasattr(tf, "function") or not tf.executing_eagerly():
        pytest.skip("no tf.function in eager mode here")
    variable = tf.Variable([0.0, 0.0])
    opt = H.make_optimizer("v1", "adam", LR)
    acc = gac.GradientAccumulator(steps=2)
    step = tf.function(lambda g: acc.step(opt, [g], [variable]))
    graph = step.get_concrete_function(tf.TensorSpec([2], tf.float32)).graph
    conds = [op for op in graph.get_operations() if op.type in ("If", "StatelessIf")]
    if not conds:
        pytest.skip("this TF builds tf.cond from Switch/Merge in functions: nothing to keep")

    def lowered(op):
        try:
            return op.get_attr("_lower_using_switch_merge")
        except ValueError:
            return False

    def size(op):
        return max(len(graph._get_function(op.get_attr(b).name).definition.node_def)
                   for b in ("then_branch", "else_branch"))

    kept = [op for op in conds if not lowered(op)]
    assert len(kept) == 1, [(op.name, lowered(op)) for op in conds]
    assert size(kept[0]) == max(size(op) for op in conds)  # the apply: the big one


def test_state_made_while_a_function_traces_keeps_no_second_copy():
    """TF 1.14's tf.function turns a variable created while it traces
    (under init_scope too) into one that keeps a second copy of its initial
    value for the process's life: for the accumulators and for the optimizer
    state an apply inside the function prepares, a parameter-sized copy
    each. There they are created as plain resource variables (the
    benchmark's memory section shows the peak)."""
    if not (compat.TRACE_KEEPS_INITIAL_VALUE and tf.executing_eagerly()):
        pytest.skip("only TF 1.14's tf.function keeps initial values twice")
    variable = tf.Variable([0.0, 0.0])
    opt = H.make_optimizer("v1", "adam", LR)
    acc = gac.GradientAccumulator(steps=2)
    step = tf.function(lambda g: acc.step(opt, [g], [variable]))
    step(tf.constant([1.0, 2.0]))
    step(tf.constant([3.0, 4.0]))
    made = list(acc._accums) + [opt.get_slot(variable, n) for n in opt.get_slot_names()]
    assert [type(v).__name__ for v in made] == ["ResourceVariable"] * 3
    # The apply ran with these slots: one Adam step on the mean gradient.
    reference = tf.Variable([0.0, 0.0])
    H.make_optimizer("v1", "adam", LR).apply_gradients([(tf.constant([2.0, 3.0]), reference)])
    np.testing.assert_allclose(variable.numpy(), reference.numpy(), rtol=1e-6)
    np.testing.assert_allclose(opt.get_slot(variable, "m").numpy(), [0.2, 0.3], rtol=1e-6)


# What AutoGraph may convert of ours when a user's tf.function calls us: the
# method the function calls and, from a thin public method, the one it
# forwards to. The accumulator builds its branches with tf.cond itself.
ENTRY_POINTS = {"GradientAccumulator.step", "GradientAccumulator.wrapped_step",
                "AccumulatingOptimizerV1.apply_gradients", "_Keras2Mixin.apply_gradients",
                "_KerasMixin._gac_accumulate"}


def _package_functions():
    """The qualified names of the package's functions and methods."""
    found = set()
    for name, module in list(sys.modules.items()):
        if not name.startswith("gradacc_compat") or module is None:
            continue
        for value in vars(module).values():
            if getattr(value, "__module__", "") != name:
                continue
            if inspect.isclass(value):
                found.update(getattr(f, "__qualname__", "") for f in vars(value).values())
            elif inspect.isfunction(value):
                found.add(value.__qualname__)
    return found


@pytest.mark.parametrize("caller", ["accumulator", "wrap-v1", "wrap-keras"])
def test_autograph_does_not_rewrite_the_accumulator(caller, capsys):
    """Converting the accumulator's code on every trace cost TF 2.21 ~3 MiB
    of Python heap for the life of the process (the benchmark's memory
    section: accumulate(N,b) 693 MiB -> 683 against plain(b)'s 665) and
    trace time. AutoGraph's log names each call it converts (or then finds
    it may leave alone)."""
    if not (compat.HAS_DO_NOT_CONVERT and tf.executing_eagerly()):
        pytest.skip("no tf.function with AutoGraph's do_not_convert here")
    family = caller.split("-")[-1]
    if family == "keras" and not H.family_available(family)[0]:
        pytest.skip(H.family_available(family)[1])
    variable = tf.Variable([0.0, 0.0])
    opt = H.make_optimizer("v1" if caller == "accumulator" else family, "adam", LR)
    if caller == "accumulator":
        acc = gac.GradientAccumulator(steps=2)

        def user_step(g):
            return acc.step(opt, [g], [variable])
    else:
        opt = gac.wrap(opt, steps=2)

        def user_step(g):
            return opt.apply_gradients([(g, variable)])
    step = tf.function(user_step)
    tf.autograph.set_verbosity(1, True)  # echoed to stdout
    try:
        step(tf.constant([1.0, 2.0]))
        step(tf.constant([3.0, 4.0]))
    finally:
        tf.autograph.set_verbosity(0, False)
    log = capsys.readouterr().out
    called = set(re.findall(r"Converted call: <(?:bound method|function) (\S+)", log))
    assert any(name.endswith(".user_step") for name in called), called  # the log was read
    ours = _package_functions()
    assert ours, "no package functions found"
    converted = set(n for n in called if n.split(".<locals>")[0] in ours)
    assert converted <= ENTRY_POINTS, sorted(converted)
    # One Adam step on the mean gradient [2, 3]: lr * m / sqrt(v) = lr * sign,
    # and the same optimizer family's own step on it, computed here.
    np.testing.assert_allclose(variable.numpy(), [-LR, -LR], rtol=1e-5)
    reference = tf.Variable([0.0, 0.0])
    H.make_optimizer("v1" if caller == "accumulator" else family, "adam", LR).apply_gradients(
        [(tf.constant([2.0, 3.0]), reference)])
    np.testing.assert_allclose(variable.numpy(), reference.numpy(), rtol=1e-6)


# Cycles of two micro-batches over variables (a, b): gradients fed, None
# where a variable gets none. Cycle 2 gives b nothing (b and its slots must
# not move: before, it got a zero gradient and momentum / Adam moved it);
# cycle 3 gives each a gradient in one micro-step (the mean over the cycle).
NONE_CYCLES = [
    [([1.0, 2.0], [3.0]), ([3.0, 0.0], [1.0])],
    [([2.0, 2.0], None), ([0.0, 4.0], None)],
    [([1.0, -1.0], None), (None, [5.0])],
]


def _cycle_means(cycle):
    """The big batch's mean gradient per variable, None where none came."""
    means = []
    for k in range(2):
        got = [np.array(g[k], "float32") for g in cycle if g[k] is not None]
        means.append(None if not got else sum(got) / float(len(cycle)))
    return means


@pytest.mark.parametrize("opt_name", ["momentum", "adam"])
@pytest.mark.parametrize("family", H.FAMILIES)
def test_variable_without_gradient_in_a_cycle_is_not_applied(mode, distributed, family,
                                                              opt_name):
    H.skip_unless_family_runs(family, mode)
    initial = [np.array([0.5, -0.5], "float32"), np.array([1.0], "float32")]

    def make():
        return [tf.compat.v1.Variable(v, name=n, use_resource=True)
                for v, n in zip(initial, ("a", "b"))]

    with H.Harness(mode) as ref:  # the big batch: plain applies of the means
        ref_vars, ref_opt = make(), H.make_optimizer(family, opt_name, 0.1)
        for cycle in NONE_CYCLES:
            means = _cycle_means(cycle)
            pairs = [(tf.constant(m), v) for m, v in zip(means, ref_vars) if m is not None]
            ref.run(lambda pairs=pairs: ref_opt.apply_gradients(pairs))
        expected = ref.values(ref_vars + H.optimizer_state(ref_opt, ref_vars))

    with H.Harness(mode, distributed) as env:
        variables, opt = make(), H.make_optimizer(family, opt_name, 0.1)
        acc = gac.GradientAccumulator(steps=2)
        scale = 1.0 / env.replicas  # the replicas' sum is the gradient fed
        zeros = (np.zeros(2, "float32"), np.zeros(1, "float32"))
        runs = {
            (True, True): env.compile(
                lambda a, b: acc.step(opt, [a * scale, b * scale], variables), *zeros),
            (True, False): env.compile(
                lambda a, b: acc.step(opt, [a * scale, None], variables), *zeros),
            (False, True): env.compile(
                lambda a, b: acc.step(opt, [None, b * scale], variables), *zeros),
        }
        for cycle in NONE_CYCLES:
            for ga, gb in cycle:
                runs[(ga is not None, gb is not None)](
                    np.array(ga if ga is not None else [0.0, 0.0], "float32"),
                    np.array(gb if gb is not None else [0.0], "float32"))
        got = env.values(variables + H.optimizer_state(opt, variables))
    H.assert_close(got, expected, "weights and optimizer state", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("policy", ["apply", "skip", "raise"])
def test_nonfinite_policy(env, policy):
    """A cycle with a NaN: "apply" is the big batch's result (NaN in the
    weights); "skip" drops the whole cycle (counted, counters reset, the
    next cycle starts clean); "raise" refuses the micro-batch before any
    state changes."""
    var = tf.compat.v1.Variable(np.zeros(2, "float32"), name="w", use_resource=True)
    opt = H.make_optimizer("v1", "sgd", 1.0)
    acc = gac.GradientAccumulator(steps=2, nonfinite=policy)
    assert acc.get_config()["nonfinite"] == policy
    run = env.compile(lambda g: acc.step(opt, [g / float(env.replicas)], [var]),
                      np.zeros(2, "float32"))
    for g in ([1.0, 1.0], [3.0, 3.0]):
        run(np.array(g, "float32"))
    np.testing.assert_allclose(env.value(var), [-2.0, -2.0])
    bad = np.array([np.nan, 1.0], "float32")
    if policy == "raise":
        with pytest.raises(tf.errors.InvalidArgumentError, match="inf or NaN"):
            run(bad)
        assert int(env.value(acc.micro_step)) == 0
        np.testing.assert_allclose(env.value(acc.gradients[0]), [0.0, 0.0])
    else:
        run(bad)
        run(np.array([1.0, 1.0], "float32"))
        if policy == "apply":
            assert np.isnan(env.value(var)[0]) and env.value(var)[1] == -3.0
            return
        np.testing.assert_allclose(env.value(var), [-2.0, -2.0])
        assert int(env.value(acc.skipped)) == 1
        assert int(env.value(acc.micro_step)) == 0 and int(env.value(acc.iterations)) == 1
    for g in ([1.0, 1.0], [1.0, 1.0]):
        run(np.array(g, "float32"))
    np.testing.assert_allclose(env.value(var), [-3.0, -3.0])
    assert int(env.value(acc.iterations)) == 2


def test_cycle_whose_weights_are_all_zero_applies_nothing(mode):
    """Weights 0 and 0: no example in the cycle. A zero gradient was
    applied, and Adam still moved the variable (its moments decay); now the
    cycle ends with nothing applied, and the next cycle is exact."""
    with H.Harness(mode) as h:
        var = tf.compat.v1.Variable(np.zeros(2, "float32"), name="w", use_resource=True)
        opt = H.make_optimizer("v1", "momentum", 0.5)
        acc = gac.GradientAccumulator(steps=2)
        run = h.compile(lambda g, w: acc.step(opt, [g], [var], weight=w),
                        np.zeros(2, "float32"), np.float32(1.0))
        run(np.array([1.0, 2.0], "float32"), np.float32(2.0))  # a first cycle that moves it
        run(np.array([4.0, 2.0], "float32"), np.float32(2.0))
        moved = h.value(var).copy()
        np.testing.assert_allclose(moved, [-1.25, -1.0])
        run(np.array([1.0, 1.0], "float32"), np.float32(0.0))
        run(np.array([3.0, 3.0], "float32"), np.float32(0.0))
        # Momentum's velocity would have moved it again by 0.9 * the last step.
        np.testing.assert_allclose(h.value(var), moved)
        assert int(h.value(acc.micro_step)) == 0
        run(np.array([2.0, 2.0], "float32"), np.float32(1.0))
        run(np.array([2.0, 2.0], "float32"), np.float32(3.0))
        # velocity 0.9 * [2.5, 2] + [2, 2] = [4.25, 3.8]; lr 0.5
        np.testing.assert_allclose(h.value(var), moved - 0.5 * np.array([4.25, 3.8]), rtol=1e-6)
