"""gac.wrap(optimizer, steps): model.fit, minimize/global_step and estimators
give the big-batch weights, optimizer state and step counters."""
from __future__ import absolute_import, division, print_function

import warnings

import numpy as np
import pytest

import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.core import families
from gradacc_compat.compat import tf
from tests import harness as H

K, N, B = 3, 3, 4


# ------------------------------------------------------------ TF1 optimizers
def _v1_train(mode, distributed, steps, batch, x, y):
    with H.Harness(mode, distributed) as h:
        variables = H.make_variables()
        global_step = tf.compat.v1.Variable(
            0, dtype=tf.int64, trainable=False, name="global_step",
            aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
        # A schedule on global_step: it must see effective steps.
        # (a callable when eager, a tensor in a graph; both are accepted)
        lr = tf.compat.v1.train.exponential_decay(0.1, global_step, 1, 0.5)
        inner = tf.compat.v1.train.MomentumOptimizer(lr, 0.9)
        opt = gac.wrap(inner, steps) if steps > 1 else inner

        def train_step(xb, yb):
            xl, yl = H.replica_slice(xb), H.replica_slice(yb)
            grads = H.gradients(lambda: H.global_mean_loss(variables, xl, yl, batch), variables)
            return opt.apply_gradients(list(zip(grads, variables)), global_step=global_step)

        run = h.compile(train_step, x[:batch], y[:batch])
        for start in range(0, len(x), batch):
            run(x[start:start + batch], y[start:start + batch])
        out = h.values(variables) + h.values(H.optimizer_state(opt, variables))
        micro = int(h.value(opt.micro_step)) if steps > 1 else None
        return out, int(h.value(global_step)), micro


def test_v1_optimizer_global_step_counts_effective_steps(mode, distributed):
    x, y = H.make_data(K * N * B)
    reference, ref_step, _ = _v1_train(mode, False, 1, N * B, x, y)
    got, step, micro = _v1_train(mode, distributed, N, B, x, y)
    assert ref_step == step == K
    assert micro == 0
    H.assert_close(got, reference, "weights and momentum")


def test_v1_minimize_in_a_graph():
    """The estimator-era one-liner: minimize(loss, global_step=...)."""
    x, y = H.make_data(K * N * B)

    def make(steps):
        inner = tf.compat.v1.train.AdamOptimizer(0.05)
        return gac.wrap(inner, steps) if steps > 1 else inner

    (ref, ref_state, ref_step), (got, state, step) = H.minimize_in_graph(make, x, y, N, B)
    H.assert_close(got, ref, "weights")
    H.assert_close(state, ref_state, "Adam state")
    assert ref_step == step == K


# ----------------------------------------------------------- Keras model.fit
def _keras():
    return compat.keras_module()


_model = H.keras_dense_model


def _fit(family, opt_name, steps, batch, x, y, distributed, schedule, make_optimizer=None):
    keras = _keras()
    keras.backend.clear_session()
    strategy = H._mirrored("eager") if distributed else None
    scope = strategy.scope() if strategy else compat.nullcontext()
    with scope:
        model = _model()
        lr = 0.1
        if schedule:
            lr = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
        module = compat.keras_legacy_optimizers() if family == "legacy" else keras.optimizers
        if opt_name == "adamw":
            inner = module.AdamW(lr, weight_decay=0.1)
        elif opt_name == "ema":
            inner = module.SGD(lr, momentum=0.9, use_ema=True, ema_momentum=0.5)
        elif opt_name == "adam":
            inner = module.Adam(lr)
        else:
            inner = module.SGD(lr, momentum=0.9 if opt_name == "momentum" else 0.0)
        opt = gac.wrap(inner, steps) if steps > 1 else inner
        if make_optimizer is not None:
            opt = make_optimizer(steps)
        model.compile(optimizer=opt, loss="mse")
    model.fit(x, y, batch_size=compat.keras_fit_batch_size(strategy, batch), epochs=1,
              shuffle=False, verbose=0)
    state = []  # callers of make_optimizer compare weights only: TF 2.11's
    if make_optimizer is None:  # LossScaleOptimizerV3.variables raises
        state = opt.variables() if callable(opt.variables) else opt.variables
    read = H.keras_value
    return model.get_weights(), [read(v) for v in state], int(read(opt.iterations))


def _skip_unless_fit_family(family):
    available, reason = H.family_available(family)
    if not available:
        pytest.skip(reason)
    if family == "v1":
        pytest.skip("model.fit takes Keras optimizers")
    if not compat.eager_by_default():
        adapter = families.adapter_for(H.make_optimizer(family, "sgd"))
        if not adapter.works_in_graph:
            pytest.skip("this Keras optimizer family refuses TF1 graphs")


@pytest.mark.parametrize("schedule", [False, True], ids=["constant_lr", "lr_schedule"])
@pytest.mark.parametrize("opt_name", H.OPTIMIZERS)
@pytest.mark.parametrize("family", ["keras", "legacy"])
def test_fit_matches_big_batch(family, opt_name, schedule, distributed):
    _skip_unless_fit_family(family)
    if distributed and not compat.eager_by_default():
        pytest.skip("Keras fit under a strategy needs eager (TF2, or the TF1 eager factor)")
    x, y = H.make_data(K * N * B, seed=13)
    # The reference is the single-device big batch, except where this Keras'
    # own distributed fit differs from its single-device fit (TF 1.x with a
    # tf.contrib.distribute strategy): there, the big batch under the strategy.
    ref_distributed = distributed and compat.keras_fit_per_replica_batch(H._mirrored("eager"))
    ref_w, ref_state, ref_it = _fit(family, opt_name, 1, N * B, x, y, ref_distributed, schedule)
    got_w, got_state, got_it = _fit(family, opt_name, N, B, x, y, distributed, schedule)
    assert ref_it == got_it == K
    H.assert_close(got_w, ref_w, "weights")
    # The wrapper's own state may include the accumulator: compare the
    # optimizer's part, which comes first and has the reference's length.
    H.assert_close(got_state[:len(ref_state)], ref_state, "optimizer state")
    assert not np.allclose(got_w[0], H.initial_values()[0][0])


@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
@pytest.mark.parametrize("family", ["keras", "legacy"])
def test_fit_short_last_batch_counts_its_examples(family, opt_name, distributed):
    """20 examples, batch_size=6, steps=4: micro-batches of 6, 6, 6 and 2
    (each splits evenly over two replicas: Keras 3's own distributed fit
    fails on one that does not). The 2-example batch counted as a quarter
    of the update (with 10 examples in 3, 3, 3, 1, one SGD step was 7.6e-3
    to 3.6e-2 off); the big batch, one batch of 20, weighs every example
    alike."""
    _skip_unless_fit_family(family)
    if distributed and not compat.eager_by_default():
        pytest.skip("Keras fit under a strategy needs eager (TF2, or the TF1 eager factor)")
    if distributed and compat.keras_fit_per_replica_batch(H._mirrored("eager")):
        pytest.skip("TF 1.x Keras fit under tf.contrib.distribute batches per replica")
    x, y = H.make_data(20, seed=37)
    ref_w, ref_state, ref_it = _fit(family, opt_name, 1, 20, x, y, False, False)
    got_w, got_state, got_it = _fit(family, opt_name, 4, 6, x, y, distributed, False)
    assert ref_it == got_it == 1
    H.assert_close(got_w, ref_w, "weights")
    H.assert_close(got_state[:len(ref_state)], ref_state, "optimizer state")


CLIPS = {"clipnorm": 0.05, "clipvalue": 0.01, "global_clipnorm": 0.05}


def _clipping_optimizer(family, clip):
    module = compat.keras_legacy_optimizers() if family == "legacy" else _keras().optimizers
    try:
        module.SGD(0.1, **{clip: CLIPS[clip]})
    except (TypeError, ValueError) as err:
        pytest.skip("%s SGD here has no %s: %s" % (family, clip, err))

    def make(steps):
        inner = module.SGD(0.1, momentum=0.9, **{clip: CLIPS[clip]})
        return gac.wrap(inner, steps) if steps > 1 else inner
    return make


def _minimized(make_optimizer, mode, steps, batch, x, y):
    """Weights after ``optimizer.minimize(loss, var_list)`` on each batch."""
    with H.Harness(mode) as h:
        variables = H.make_variables(resource=True)
        opt = make_optimizer(steps)
        if not hasattr(opt, "minimize"):
            pytest.skip("%s has no minimize()" % type(opt).__name__)

        def train_step(xb, yb):
            return opt.minimize(lambda: H.global_mean_loss(variables, xb, yb, batch),
                                var_list=variables)

        run = h.compile(train_step, x[:batch], y[:batch])
        for start in range(0, len(x), batch):
            run(x[start:start + batch], y[start:start + batch])
        return h.values(variables)


@pytest.mark.parametrize("clip", sorted(CLIPS))
@pytest.mark.parametrize("family", ["keras", "legacy"])
def test_minimize_clips_the_accumulated_gradient_once(family, clip, mode):
    """clipnorm / clipvalue / global_clipnorm act on the accumulated gradient,
    once per effective step, through minimize() -- also on OptimizerV2
    before TF 2.4, which clips where gradients are computed."""
    _skip_unless_fit_family(family)
    H.skip_unless_mode_available(mode)
    make = _clipping_optimizer(family, clip)
    if mode == "graph" and not families.adapter_for(make(1)).works_in_graph:
        pytest.skip("this Keras optimizer family refuses TF1 graphs")
    x, y = H.make_data(K * N * B, seed=17)
    ref = _minimized(make, mode, 1, N * B, x, y)
    got = _minimized(make, mode, N, B, x, y)
    H.assert_close(got, ref, "clipped weights")
    unclipped = _minimized(lambda steps: H.make_optimizer(family, "momentum"), mode, 1,
                           N * B, x, y)
    assert not np.allclose(ref[0], unclipped[0])  # clipping mattered


@pytest.mark.parametrize("clip", sorted(CLIPS))
def test_fit_clips_the_accumulated_gradient_once(clip):
    _skip_unless_fit_family("keras")
    make = _clipping_optimizer("keras", clip)
    x, y = H.make_data(K * N * B, seed=17)
    ref = _fit("keras", "sgd", 1, N * B, x, y, False, False, make_optimizer=make)[0]
    got = _fit("keras", "sgd", N, B, x, y, False, False, make_optimizer=make)[0]
    H.assert_close(got, ref, "clipped weights")
    unclipped = _fit("keras", "momentum", 1, N * B, x, y, False, False)[0]
    if np.allclose(ref[0], unclipped[0]):
        pytest.skip("model.fit of this tf.keras (%s, TF %s) does not clip at all"
                    % (compat.KERAS_VERSION, compat.TF_VERSION_STRING))


@pytest.mark.parametrize("variant", ["adamw", "ema"])
def test_fit_weight_decay_and_ema_act_once_per_effective_step(variant):
    """AdamW's decoupled weight decay and the EMA of the weights (written
    back at the end of fit) advance once per effective step."""
    _skip_unless_fit_family("keras")
    module = compat.keras_module().optimizers
    try:
        if variant == "adamw":
            module.AdamW(0.1, weight_decay=0.1)
        else:
            module.SGD(0.1, use_ema=True)
    except (AttributeError, TypeError, ValueError) as err:
        pytest.skip("tf.keras here (%s) has no %s: %s" % (compat.KERAS_FLAVOUR, variant, err))
    x, y = H.make_data(K * N * B, seed=19)
    ref_w, _, ref_it = _fit("keras", variant, 1, N * B, x, y, False, False)
    got_w, _, got_it = _fit("keras", variant, N, B, x, y, False, False)
    assert ref_it == got_it == K
    H.assert_close(got_w, ref_w, "weights")
    # Decay / EMA changed the result, so the comparison above is sensitive.
    without = _fit("keras", "adam" if variant == "adamw" else "momentum", 1, N * B, x, y,
                   False, False)[0]
    assert not np.allclose(ref_w[0], without[0], rtol=1e-5, atol=1e-6)


def _loss_scale_optimizer_class():
    keras = compat.keras_module()
    if compat.KERAS_FLAVOUR == "keras3":
        return keras.optimizers.LossScaleOptimizer
    mixed = getattr(keras, "mixed_precision", None)
    return getattr(mixed, "LossScaleOptimizer", None)


def _loss_scale_state(optimizer):
    """(current loss scale, finite steps counted towards growing it)."""
    def first(*names):
        return next(getattr(optimizer, n) for n in names if hasattr(optimizer, n))
    read = lambda v: np.asarray(tf.convert_to_tensor(v))
    return (float(read(first("dynamic_scale", "loss_scale"))),  # Keras 3 / Keras 2
            int(read(first("step_counter", "dynamic_counter"))))


@pytest.mark.parametrize("finite", [True, False], ids=["finite", "one_nonfinite_microbatch"])
@pytest.mark.parametrize("order", ["wrap_outside", "wrap_inside"])
def test_fit_with_loss_scale_optimizer(order, finite, distributed):
    """Dynamic loss scaling, K cycles of N micro-batches, one micro-batch of
    cycle 1 non-finite (an infinite target) where asked.

    wrap(LossScaleOptimizer(opt)) unscales and finite-checks the accumulated
    gradient once per cycle: weights, loss scale AND its good-step counter
    equal the big batch's (a check per micro-batch would count K*N), and the
    non-finite cycle applies nothing, like the big batch holding it.
    LossScaleOptimizer(wrap(opt)) checks each micro-batch: finite runs equal
    the big batch; a non-finite micro-batch is dropped on its own."""
    _skip_unless_fit_family("keras")
    lso = _loss_scale_optimizer_class()
    if lso is None or not compat.eager_by_default():
        pytest.skip("no Keras LossScaleOptimizer for eager here (keras %s)" % compat.KERAS_FLAVOUR)
    if distributed and compat.TF1:
        pytest.skip("no Keras LossScaleOptimizer under tf.contrib.distribute")
    module = compat.keras_module().optimizers
    made = []

    def make(steps):
        if steps == 1:
            opt = lso(module.SGD(0.1, momentum=0.9))
        elif order == "wrap_outside":
            opt = gac.wrap(lso(module.SGD(0.1, momentum=0.9)), steps)
        else:
            opt = lso(gac.wrap(module.SGD(0.1, momentum=0.9), steps))
        made.append(opt)
        return opt

    x, y = H.make_data(K * N * B, seed=23)
    bad = 4  # micro-batch 4: the middle of cycle 1 (N = 3), in big batch 1
    if not finite:
        y = y.copy()
        y[bad * B] = np.inf
    ref_w = _fit("keras", "sgd", 1, N * B, x, y, False, False, make_optimizer=make)[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got_w = _fit("keras", "sgd", N, B, x, y, distributed, False, make_optimizer=make)[0]
    # The first-use audit names the order to use, for the inside order only.
    said = [str(w.message) for w in caught if issubclass(w.category, gac.AccumulationWarning)]
    assert any("gac.wrap(LossScaleOptimizer(optimizer), steps=3)" in m for m in said) == \
        (order == "wrap_inside"), said
    ref_scale, got_scale = _loss_scale_state(made[0]), _loss_scale_state(made[1])
    assert np.isfinite(got_w[0]).all()
    assert not np.allclose(got_w[0], H.initial_values()[0][0])
    if order == "wrap_outside" or finite:
        H.assert_close(got_w, ref_w, "weights")
    if order == "wrap_outside":
        assert got_scale == ref_scale  # == (2**15, K) when finite
        if finite:
            assert ref_scale[1] == K
        return
    # wrap_inside: the loss-scale optimizer sees every micro-batch.
    if finite:
        assert got_scale[1] == K * N
        return
    assert got_scale[0] == ref_scale[0]  # halved once
    keep = np.ones(len(x), bool)
    keep[bad * B:(bad + 1) * B] = False
    without = _fit("keras", "sgd", N, B, x[keep], y[keep], distributed, False,
                   make_optimizer=make)[0]
    H.assert_close(got_w, without, "weights (non-finite micro-batch dropped)")


# ---------------------------------------------------------------- contract
@pytest.mark.parametrize("family", H.FAMILIES)
def test_wrapper_is_of_the_wrapped_family(family):
    available, reason = H.family_available(family)
    if not available:
        pytest.skip(reason)
    inner = H.make_optimizer(family, "adam")
    opt = gac.wrap(inner, 4)
    assert families.adapter_for(opt) is families.adapter_for(inner)
    if family == "v1":
        assert isinstance(opt, tf.compat.v1.train.Optimizer)
        assert opt.inner_optimizer is inner
        return
    assert isinstance(opt, type(inner))
    config = opt.get_config()
    assert config["gac_steps"] == 4
    again = type(opt).from_config(config)
    assert again.steps == 4 and isinstance(again, type(inner))


BAD_WRAPS = {
    "not_an_optimizer": (TypeError, "not an optimizer", lambda: gac.wrap(object(), 2)),
    "steps_zero": (ValueError, "Received: steps=0",
                   lambda: gac.wrap(H.make_optimizer("v1", "sgd"), 0)),
    "steps_float": (TypeError, "Received: steps=2.5",
                    lambda: gac.wrap(H.make_optimizer("v1", "sgd"), 2.5)),
    "clipnorm_on_wrapper": (TypeError, "belongs on the optimizer being wrapped",
                            lambda: gac.wrap(H.make_optimizer("v1", "sgd"), 2, clipnorm=1.0)),
    "unknown_option": (TypeError, "unexpected option 'colour'",
                       lambda: gac.wrap(H.make_optimizer("v1", "sgd"), 2, colour="red")),
}


@pytest.mark.parametrize("case", sorted(BAD_WRAPS))
def test_bad_wrap_says_what_was_received(case):
    error, message, call = BAD_WRAPS[case]
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)
    # ... and what was detected: the TF version and what tf.keras is.
    assert compat.TF_VERSION_STRING in str(info.value)
    assert compat.KERAS_FLAVOUR in str(info.value)


def test_wrapping_a_used_keras_optimizer_is_refused():
    if not compat.eager_by_default():
        pytest.skip("builds the optimizer eagerly")
    opt = H.make_optimizer("keras", "adam")
    var = tf.Variable(np.zeros(2, "float32"))
    opt.apply_gradients([(tf.ones(2), var)])
    with pytest.raises(ValueError, match="already been used"):
        gac.wrap(opt, 2)


@pytest.mark.parametrize("fmt", [".keras", ".h5", "savedmodel"])
def test_saved_model_with_wrapper_loads_and_trains_on(fmt, tmpdir):
    """model.save / load_model, mid-cycle, keep the wrapper class, its steps,
    the optimizer state and the pending micro-batch; both models then train
    on identically."""
    _skip_unless_fit_family("keras")
    keras = _keras()
    if fmt == ".keras" and not compat.eager_by_default():
        pytest.skip("the .keras format is TF2-only")
    if fmt == ".h5" and compat.KERAS_FLAVOUR == "keras3":
        pytest.skip("Keras 3 cannot read back its own HDF5 compile config (loss 'mse'); "
                    ".keras is its format")
    if fmt == "savedmodel" and compat.KERAS_FLAVOUR == "keras3":
        pytest.skip("Keras 3 writes SavedModels for inference only (model.export)")
    if fmt == "savedmodel" and not compat.eager_by_default():
        pytest.skip("TF 1.x Keras writes SavedModels only when eager")
    if fmt == ".keras" and compat.KERAS_FLAVOUR == "keras2" and compat.TF_VERSION < (2, 12, 0):
        pytest.skip("Keras %s has no .keras format (from TF 2.12)" % compat.KERAS_VERSION)
    first = K * N * B + B  # K cycles and one micro-batch pending
    x, y = H.make_data(first + K * N * B, seed=29)
    keras.backend.clear_session()
    model = _model()
    model.compile(optimizer=gac.wrap(keras.optimizers.Adam(0.05), N, reduction="sum"),
                  loss="mse")
    model.fit(x[:first], y[:first], batch_size=B, shuffle=False, verbose=0)
    read = keras.backend.get_value
    assert int(read(model.optimizer.micro_step)) == 1
    path = str(tmpdir.join("model" + (fmt if fmt.startswith(".") else "")))
    try:
        model.save(path, **({"save_format": "tf"} if fmt == "savedmodel" else {}))
    except NotImplementedError as err:  # TF 1.14: "SavedModel ... still in experimental stages"
        if fmt != "savedmodel":
            raise
        pytest.skip("this Keras (TF %s) cannot save %s: %s" % (compat.TF_VERSION_STRING, fmt, err))
    # The scope too: TF 2.0/2.1 compile a loaded SavedModel without custom_objects.
    with keras.utils.custom_object_scope(gac.keras_custom_objects()):
        loaded = keras.models.load_model(path, custom_objects=gac.keras_custom_objects())
    assert type(loaded.optimizer).__name__ == type(model.optimizer).__name__
    assert loaded.optimizer.steps == N
    # Every option of wrap() comes back (reduction was lost, read as "mean").
    assert loaded.optimizer.accumulator.reduction == "sum"
    if fmt == "savedmodel":
        # Keras restores no optimizer state from a SavedModel (plain Adam
        # neither): the loaded wrapper starts afresh, like a new wrap().
        model.compile(optimizer=gac.wrap(keras.optimizers.Adam(0.05), N, reduction="sum"),
                      loss="mse")
    for m in (model, loaded):
        m.fit(x[first:], y[first:], batch_size=B, shuffle=False, verbose=0)
    H.assert_close(loaded.get_weights(), model.get_weights(), "weights after training on")
    its = [int(read(m.optimizer.iterations)) for m in (loaded, model)]
    assert its[0] == its[1] == (K if fmt == "savedmodel" else 2 * K)
    assert int(read(loaded.optimizer.micro_step)) == (0 if fmt == "savedmodel" else 1)


@pytest.mark.parametrize("flush", [False, True], ids=["carry_over", "flush_at_epoch_end"])
def test_epoch_boundary_policy(flush, distributed):
    """Two epochs of 5 micro-batches with steps=2. Flushing: each epoch is
    [b1+b2], [b3+b4], [b5]. Carrying over: [b1+b2], [b3+b4], [b5+b1'], ..."""
    _skip_unless_fit_family("keras")
    if distributed and not compat.eager_by_default():
        pytest.skip("Keras fit under a strategy needs eager (TF2, or the TF1 eager factor)")
    keras = _keras()
    x, y = H.make_data(5 * B, seed=31)
    strategy = H._mirrored("eager") if distributed else None
    # The reference: plain fits whose batches are the cycles above (under the
    # same strategy where Keras' distributed fit is not its single-device fit).
    ref_strategy = strategy if compat.keras_fit_per_replica_batch(strategy) else None
    if flush and ref_strategy is not None:
        # Seen on TF 1.15: the epoch's last step fed examples 8 and 9, one to
        # each replica -- not the 4 examples a plain fit of x[16:20] feeds.
        pytest.skip("TF 1.x Keras fit under tf.contrib.distribute feeds replicas in its "
                    "own order, so no plain fit of other batch sizes is the reference")
    if flush:
        ref_plan = [(x[:4 * B], y[:4 * B], 2 * B, 1), (x[4 * B:], y[4 * B:], B, 1)] * 2
    else:
        ref_plan = [(np.concatenate([x, x]), np.concatenate([y, y]), 2 * B, 1)]

    def fitted(steps, strategy, plan, callbacks=()):
        keras.backend.clear_session()
        with (strategy.scope() if strategy else compat.nullcontext()):
            model = _model()
            opt = keras.optimizers.SGD(0.1, momentum=0.9)
            model.compile(optimizer=gac.wrap(opt, steps) if steps > 1 else opt, loss="mse")
        for xs, ys, batch, epochs in plan:
            model.fit(xs, ys, batch_size=compat.keras_fit_batch_size(strategy, batch),
                      epochs=epochs, shuffle=False, verbose=0, callbacks=list(callbacks))
        return model.get_weights(), int(keras.backend.get_value(model.optimizer.iterations))

    ref_w, ref_it = fitted(1, ref_strategy, ref_plan)
    callbacks = [gac.flush_at_epoch_end()] if flush else []
    got_w, got_it = fitted(2, strategy, [(x, y, B, 2)], callbacks)
    H.assert_close(got_w, ref_w, "weights")
    assert got_it == ref_it == (6 if flush else 5)


@pytest.mark.parametrize("order", ["wrap_outside", "wrap_inside"])
def test_v1_loss_scale_optimizer_in_a_graph(order):
    """TF1's MixedPrecisionLossScaleOptimizer (dynamic scale) with minimize():
    both wrapping orders give the big-batch weights and global_step."""
    lso = H.v1_loss_scale_optimizer()
    x, y = H.make_data(K * N * B, seed=37)

    def make(steps):
        inner = tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)
        if steps == 1:
            return lso(inner, "dynamic")
        if order == "wrap_outside":
            return gac.wrap(lso(inner, "dynamic"), steps)
        return lso(gac.wrap(inner, steps), "dynamic")

    (ref, _, ref_step), (got, _, step) = H.minimize_in_graph(make, x, y, N, B)
    H.assert_close(got, ref, "weights")
    assert ref_step == step == K


def test_schedules_and_callable_learning_rates_are_carried_over():
    """The wrapper's learning rate is the original's object: a callable keeps
    following what it reads (OptimizerV2's get_config() would freeze it), and
    an unregistered LearningRateSchedule subclass needs no registration."""
    _skip_unless_fit_family("keras")
    if not compat.eager_by_default():
        pytest.skip("reads learning rates eagerly")
    keras = _keras()

    class Halving(keras.optimizers.schedules.LearningRateSchedule):  # not registered
        def __call__(self, step):
            return 0.1 * tf.pow(0.5, tf.cast(step, tf.float32))

        def get_config(self):
            return {}

    def lr_value(opt):
        return float(np.asarray(tf.convert_to_tensor(opt.learning_rate)))

    rate = tf.Variable(0.1)
    inner = keras.optimizers.SGD(learning_rate=lambda: rate * 1.0)
    opt = gac.wrap(inner, N)
    rate.assign(0.025)
    assert lr_value(opt) == lr_value(inner)  # 0.025, or 0.1 where Keras made it a variable

    x, y = H.make_data(K * N * B, seed=41)
    make = lambda steps: gac.wrap(keras.optimizers.SGD(Halving(), momentum=0.9), steps) \
        if steps > 1 else keras.optimizers.SGD(Halving(), momentum=0.9)
    ref_w = _fit("keras", "sgd", 1, N * B, x, y, False, False, make_optimizer=make)[0]
    got_w = _fit("keras", "sgd", N, B, x, y, False, False, make_optimizer=make)[0]
    H.assert_close(got_w, ref_w, "weights")
