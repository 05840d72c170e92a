"""Estimator-era code: optimizers (and accumulators) built once per replica.

An estimator's ``model_fn`` under ``RunConfig(train_distribute=...)`` runs
once per replica, so each replica builds its own ``gac.wrap(...)``; the
replicas must still share one accumulator. The reference is the
single-device estimator on the replicas' concatenated batches.
"""
from __future__ import absolute_import, division, print_function

import numpy as np
import pytest

import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.compat import tf
from tests import harness as H

K, N, B = 3, 2, 4
REPLICAS = H.REPLICAS
STRATEGY_APIS = ("tf.distribute", "tf.contrib.distribute")

needs_estimator = pytest.mark.skipif(not compat.HAS_ESTIMATOR,
                                     reason="tf.estimator is gone from TF 2.16")


def _strategy(api):
    devices = ["/cpu:%d" % i for i in range(REPLICAS)]
    if api == "tf.contrib.distribute":
        if not compat.HAS_CONTRIB_DISTRIBUTE:
            pytest.skip("tf.contrib.distribute is TF 1.x only (TF %s here)"
                        % compat.TF_VERSION_STRING)
        from tensorflow.contrib import distribute as contrib_distribute
        return contrib_distribute.MirroredStrategy(devices)
    return tf.distribute.MirroredStrategy(devices)


def _model_variables(est):
    """Every variable in the estimator's checkpoint that is not the
    accumulator's: the weights, the optimizer's slots, global_step."""
    return dict((name, est.get_variable_value(name)) for name in est.get_variable_names()
                if "gradient_accumulator" not in name)


def _train_estimator(model_dir, steps, batch, x, y, strategy=None, max_steps=K,
                     epochs=1, hook=True, **saving):
    """Trains on (x, y) in ``epochs`` equal ``train()`` calls (the last
    with ``max_steps``, the others until their input ends); ``saving`` are
    RunConfig's checkpoint settings."""
    init, _ = H.initial_values()

    def model_fn(features, labels, mode):
        kernel = tf.compat.v1.get_variable("kernel", initializer=tf.constant(init[0]))
        bias = tf.compat.v1.get_variable("bias", initializer=tf.constant(init[1]))
        loss = tf.reduce_mean(H.per_example_loss([kernel, bias], features, labels))
        inner = tf.compat.v1.train.AdamOptimizer(0.05)
        opt = gac.wrap(inner, steps) if steps > 1 else inner
        train_op = opt.minimize(loss, global_step=tf.compat.v1.train.get_or_create_global_step())
        # The wrapper's hook applies only under TF 1.x collectives across
        # workers; passed here (one process), it must change nothing.
        hooks = [opt.make_session_run_hook()] if steps > 1 and hook else []
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                          training_hooks=hooks)

    # One device: the README's RunConfig (no session config, no soft placement).
    session_config = compat.tf1_session_config(REPLICAS) if strategy is not None else None
    config = tf.estimator.RunConfig(train_distribute=strategy, session_config=session_config,
                                    **saving)
    est = tf.estimator.Estimator(model_fn, model_dir=model_dir, config=config)
    size = len(x) // epochs
    for epoch in range(epochs):
        xs, ys = x[epoch * size:(epoch + 1) * size], y[epoch * size:(epoch + 1) * size]

        def input_fn(xs=xs, ys=ys):
            return tf.data.Dataset.from_tensor_slices((xs, ys)).batch(batch)
        est.train(input_fn, max_steps=max_steps if epoch == epochs - 1 else None)
    return _model_variables(est)


@needs_estimator
def test_estimator_matches_big_batch(tmpdir):
    """The estimator-era one-liner, one device: minimize(loss, global_step)."""
    x, y = H.make_data(K * N * B, seed=11)
    ref = _train_estimator(str(tmpdir.join("big")), 1, N * B, x, y)
    got = _train_estimator(str(tmpdir.join("acc")), N, B, x, y)
    assert int(got["global_step"]) == int(ref["global_step"]) == K
    names = sorted(ref)
    assert sorted(got) == names and any("Adam" in name for name in names)
    H.assert_close([got[n] for n in names], [ref[n] for n in names], "variables: %s" % names)


@needs_estimator
@pytest.mark.parametrize("api", STRATEGY_APIS)
def test_distributed_estimator_matches_single_device_big_batch(api, tmpdir):
    """model_fn runs once per replica: each replica wraps its own optimizer."""
    x, y = H.make_data(K * N * B * REPLICAS, seed=21)
    # Each replica takes the next batch of B: an effective step is N x
    # REPLICAS consecutive batches, the big batch those examples in one.
    ref = _train_estimator(str(tmpdir.join("big")), 1, N * B * REPLICAS, x, y)
    got = _train_estimator(str(tmpdir.join("acc")), N, B, x, y, _strategy(api))
    assert int(got["global_step"]) == int(ref["global_step"]) == K
    assert sorted(got) == sorted(ref)
    assert any("Adam" in name for name in ref)  # slots are compared, not just weights
    names = sorted(ref)
    H.assert_close([got[n] for n in names], [ref[n] for n in names],
                   "weights, Adam slots, global_step: %s" % names)


@needs_estimator
@pytest.mark.parametrize("saving", [
    {"save_checkpoints_steps": 1}, {"save_checkpoints_steps": 2}, {}],
    ids=["every_step", "every_2_steps", "default_timed"])
def test_pending_micro_batches_carry_across_train_calls(saving, tmpdir):
    """A train() call per epoch (the estimator idiom), epochs of 3
    micro-batches with N = 4: the end-of-train checkpoint is skipped when
    global_step did not move since the last save, and the pending
    micro-batches of every call were lost (global_step 0 after 4 epochs).
    The model_fn is the README's: no hook passed."""
    steps, epochs = 4, 4
    x, y = H.make_data(epochs * 3 * B, seed=73)
    ref = _train_estimator(str(tmpdir.join("big")), 1, steps * B, x, y, max_steps=None)
    got = _train_estimator(str(tmpdir.join("acc")), steps, B, x, y, max_steps=None,
                           epochs=epochs, hook=False, **saving)
    assert int(got["global_step"]) == int(ref["global_step"]) == 3
    names = sorted(ref)
    assert sorted(got) == names
    H.assert_close([got[n] for n in names], [ref[n] for n in names], "variables: %s" % names)


@pytest.mark.parametrize("api", STRATEGY_APIS)
def test_accumulator_built_inside_the_replica_function(api):
    """A GradientAccumulator (and a wrapper) built in each replica's call of
    the step function, as estimator-era graph code does."""
    x, y = H.make_data(K * N * B * REPLICAS, seed=22)
    global_batch = B * REPLICAS
    results = []
    for steps, batch, strategy in ((1, N * global_batch, None),
                                   (N, global_batch, lambda: _strategy(api))):
        with H.Harness("graph") as h:
            dist = strategy() if strategy else None
            with dist.scope() if dist else compat.nullcontext():
                variables = H.make_variables()
            built = []

            def step(xb, yb):
                opt = tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)
                xl, yl = H.replica_slice(xb), H.replica_slice(yb)
                loss_fn = lambda: H.global_mean_loss(variables, xl, yl, batch)  # noqa: E731
                grads = H.gradients(loss_fn, variables)
                if steps == 1:
                    return opt.apply_gradients(list(zip(grads, variables)))
                acc = gac.GradientAccumulator(steps)  # one per replica call
                built.append(acc)
                return acc.step(opt, grads, variables)

            xb = tf.compat.v1.placeholder(tf.float32, [batch, 4])
            yb = tf.compat.v1.placeholder(tf.float32, [batch, 3])
            if dist is None:
                out = step(xb, yb)
            else:
                with dist.scope():
                    out = tf.group(*compat.local_results(
                        dist, dist.extended.call_for_each_replica(step, args=(xb, yb))))
            h.initialize()
            for start in range(0, len(x), batch):
                h.session.run(out, {xb: x[start:start + batch], yb: y[start:start + batch]})
            if built:
                assert len(built) == REPLICAS
                assert [id(v) for v in built[0].variables] == \
                    [id(v) for v in built[1].variables]  # the same variables
                assert int(h.value(built[1].iterations)) == K
            results.append(h.values(variables))
    H.assert_close(results[1], results[0], "weights")


# ------------------------------------------------ canned wide-and-deep model
VOCAB = 16  # ids 0-12 are looked up (see below); 13-15 never


def _wide_and_deep_data(count):
    rng = np.random.RandomState(5)
    # Each effective step looks up a few ids of its own, with duplicates:
    # the linear part's Ftrl and the embedding's Adagrad update only the
    # rows present, so rows of earlier steps must be left alone.
    ids = np.concatenate([rng.randint(4 * k, 4 * k + 5, size=count // K) for k in range(K)])
    features = {"id": ids.reshape(-1, 1).astype("int64"),
                "x": rng.normal(size=(count, 4)).astype("float32")}
    labels = (rng.uniform(size=(count, 1)) > 0.5).astype("int64")
    return features, labels


DNN_OPTIMIZERS = {"Adagrad": lambda train: train.AdagradOptimizer(0.1),
                  "Momentum": lambda train: train.MomentumOptimizer(0.1, 0.9)}
KERAS_DNN_OPTIMIZERS = {"Adagrad": lambda keras: keras.Adagrad(0.1),
                        "Momentum": lambda keras: keras.SGD(0.1, momentum=0.9)}


def _train_wide_and_deep(api, model_dir, steps, batch, features, labels, reduction, dnn,
                         schedule=None):
    """``api="v1"``: tf.compat.v1.estimator's class with tf.compat.v1.train
    optimizers; ``"v2"``: TF2's tf.estimator class with Keras (OptimizerV2)
    optimizers. ``schedule`` (v1): the deep optimizer is a callable whose
    learning rate decays with ``schedule(global_step)``, as the class's
    docstring shows."""
    fc = tf.feature_column
    ids = fc.categorical_column_with_identity("id", VOCAB)

    def wrapped(optimizer):  # the reference (steps=1) runs TF alone
        return gac.wrap(optimizer, steps, reduction=reduction) if steps > 1 else optimizer

    if api == "v1":
        train = tf.compat.v1.train
        cls, losses = tf.compat.v1.estimator.DNNLinearCombinedClassifier, tf.compat.v1.losses
        linear = train.FtrlOptimizer(0.1, l1_regularization_strength=0.001,
                                     l2_regularization_strength=0.001)
        if schedule is None:
            deep = DNN_OPTIMIZERS[dnn](train)
        else:
            def deep():
                step = schedule(tf.compat.v1.train.get_global_step())
                lr = train.exponential_decay(0.1, step, decay_steps=1, decay_rate=0.5)
                return wrapped(train.MomentumOptimizer(lr, 0.9))
    else:
        keras = compat.keras_legacy_optimizers() or compat.keras_module().optimizers
        cls, losses = tf.estimator.DNNLinearCombinedClassifier, compat.keras_module().losses
        linear = keras.Ftrl(0.1, l1_regularization_strength=0.001,
                            l2_regularization_strength=0.001)
        deep = KERAS_DNN_OPTIMIZERS[dnn](keras)
    est = cls(
        model_dir=model_dir,
        linear_feature_columns=[ids],
        linear_optimizer=wrapped(linear),
        dnn_feature_columns=[fc.embedding_column(ids, 3), fc.numeric_column("x", shape=(4,))],
        dnn_hidden_units=[4],
        dnn_optimizer=deep if callable(deep) else wrapped(deep),
        loss_reduction=(losses.Reduction.SUM if reduction == "sum"
                        else losses.Reduction.SUM_OVER_BATCH_SIZE),
        config=tf.estimator.RunConfig(tf_random_seed=7))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(batch)

    # v1 canned estimators add 1 to global_step after every batch themselves
    # (their optimizers' minimize gets no global_step): K effective steps are
    # K x steps batches. v2 ones make global_step the Keras optimizer's
    # iterations: it counts effective steps.
    est.train(input_fn, max_steps=K * steps if api == "v1" else K)
    return _model_variables(est)


def _by_variable(variables):
    """Weights by name; slots by the variable they belong to ("<var>/<slot>"),
    since a wrapper's slots sit under its own name scope in v2
    ("training/Ftrl/linear/..." for "training/linear/...")."""
    out = {}
    for name, value in variables.items():
        if name.startswith("training/"):
            parts = name.split("/")
            roots = [i for i, p in enumerate(parts) if p in ("dnn", "linear")]
            if not roots:  # hyperparameters and counters of the optimizers
                continue
            name = "slot:" + "/".join(parts[roots[0]:])
        out[name] = value
    return out


@needs_estimator
@pytest.mark.parametrize("api", ["v1", "v2"])
@pytest.mark.parametrize("reduction, dnn", [("mean", "Adagrad"), ("sum", "Momentum")])
def test_canned_wide_and_deep_matches_big_batch(api, reduction, dnn, tmpdir):
    """DNNLinearCombinedClassifier: Ftrl on the sparse linear part, Adagrad
    (the canned default) or Momentum on the deep part, whose embedding column
    gets sparse gradients; both wrapped. Loss SUM_OVER_BATCH_SIZE with the
    wrapper's mean, SUM (the v1 default) with reduction="sum". (Ftrl and
    Adagrad leave a zero-gradient row as it is when it starts from zero, as
    the linear weights do: Momentum on the randomly initialised embedding is
    what tells a row-exact apply from a dense one here.)"""
    if api == "v2" and compat.TF1:
        pytest.skip("TF %s's tf.estimator canned classes are the v1 ones"
                    % compat.TF_VERSION_STRING)
    features, labels = _wide_and_deep_data(K * N * B)
    args = (features, labels, reduction, dnn)
    ref = _train_wide_and_deep(api, str(tmpdir.join("big")), 1, N * B, *args)
    got = _train_wide_and_deep(api, str(tmpdir.join("acc")), N, B, *args)
    assert int(ref["global_step"]) == K
    assert int(got["global_step"]) == (K * N if api == "v1" else K)
    ref, got = _by_variable(ref), _by_variable(got)
    names = sorted(n for n in ref if n != "global_step")
    assert sorted(n for n in got if n != "global_step") == names
    # Slots are compared too: v1 names them "<var>/Ftrl", v2 "slot:<var>/...".
    slots = [n for n in names if n.startswith("slot:") or n.split("/")[-1] in
             ("Ftrl", "Ftrl_1", "Adagrad", "Momentum")]
    assert any("linear/" in n for n in slots) and any("dnn/" in n for n in slots), names
    H.assert_close([got[n] for n in names], [ref[n] for n in names], "variables: %s" % names)
    # Rows no step looked up were never touched, in either run.
    weights = [n for n in names if n.endswith("linear_model/id/weights")]
    assert len(weights) == 1, names
    looked_up = np.unique(features["id"])
    assert looked_up.max() < 13 and len(looked_up) > 8
    assert np.all(got[weights[0]][13:] == 0)
    assert np.all(got[weights[0]][looked_up] != 0)


@needs_estimator
@pytest.mark.parametrize("keyed_on", ["effective_steps", "global_step"])
def test_v1_combined_schedule_keyed_on_effective_steps(keyed_on, tmpdir):
    """v1 DNNLinearCombined* add 1 to global_step per batch: a schedule on
    global_step ran N times fast (3.55 off on 1.x). Keyed on
    ``global_step // N`` (the README's line) it is the big batch's."""
    features, labels = _wide_and_deep_data(K * N * B)
    args = (features, labels, "sum", "Momentum")
    # Both runs build the same ops before the model's (the graph seed then
    # gives each initializer the same op seed): global_step // 1 here.
    ref = _train_wide_and_deep("v1", str(tmpdir.join("big")), 1, N * B, *args,
                               schedule=lambda step: step // 1)
    per = N if keyed_on == "effective_steps" else 1
    got = _train_wide_and_deep("v1", str(tmpdir.join("acc")), N, B, *args,
                               schedule=lambda step: step // per)
    ref, got = _by_variable(ref), _by_variable(got)
    names = sorted(n for n in ref if n != "global_step" and "/dnn/" in "/" + n)
    assert names and sorted(n for n in got if n in names) == names
    if keyed_on == "effective_steps":
        H.assert_close([got[n] for n in names], [ref[n] for n in names], "dnn: %s" % names)
    else:  # what the README warns of: the decay runs N times fast
        assert max(np.abs(got[n] - ref[n]).max() for n in names) > 1e-3


@needs_estimator
@pytest.mark.parametrize("change", ["turned_on", "turned_off"])
def test_accumulation_changed_in_an_existing_model_dir(change, tmpdir):
    """Train K steps, then K more in the same model_dir with accumulation
    turned on (the checkpoint has no accumulator state: it failed with
    NotFoundError for every optimizer) or off. Both equal big batches
    throughout."""
    x, y = H.make_data(2 * K * N * B, seed=67)
    halves = [(x[:K * N * B], y[:K * N * B]), (x[K * N * B:], y[K * N * B:])]
    plans = {"big": (1, 1), "turned_on": (1, N), "turned_off": (N, 1)}
    results = {}
    for name in ("big", change):
        model_dir = str(tmpdir.join(name))
        for (xs, ys), steps, max_steps in zip(halves, plans[name], (K, 2 * K)):
            batch = B if steps > 1 else N * B
            results[name] = _train_estimator(model_dir, steps, batch, xs, ys,
                                             max_steps=max_steps)
    ref, got = results["big"], results[change]
    assert int(got["global_step"]) == int(ref["global_step"]) == 2 * K
    names = sorted(ref)
    assert sorted(got) == names
    H.assert_close([got[n] for n in names], [ref[n] for n in names], "variables: %s" % names)


@needs_estimator
@pytest.mark.parametrize("cls_name, counts", [
    ("LinearClassifier", "effective steps"),
    ("DNNClassifier", "effective steps"),
    ("DNNLinearCombinedClassifier", "micro-steps")])
def test_what_global_step_counts_in_each_v1_canned_estimator(cls_name, counts, tmpdir):
    """v1 LinearClassifier and DNNClassifier pass global_step to minimize
    (the wrapper advances it once per effective step); the combined class
    adds 1 per batch itself. The README states the rule per class."""
    features, labels = _wide_and_deep_data(K * N * B)
    fc = tf.feature_column
    ids = fc.categorical_column_with_identity("id", VOCAB)
    numeric = fc.numeric_column("x", shape=(4,))
    train = tf.compat.v1.train

    def wrapped():
        return gac.wrap(train.AdagradOptimizer(0.1), N)

    cls = getattr(tf.compat.v1.estimator, cls_name)
    if cls_name == "LinearClassifier":
        est = cls([ids], model_dir=str(tmpdir), optimizer=wrapped())
    elif cls_name == "DNNClassifier":
        est = cls([4], [numeric], model_dir=str(tmpdir), optimizer=wrapped())
    else:
        est = cls(model_dir=str(tmpdir), linear_feature_columns=[ids],
                  linear_optimizer=wrapped(), dnn_feature_columns=[numeric],
                  dnn_hidden_units=[4], dnn_optimizer=wrapped())

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(B)

    # The v1 heads' default loss_reduction=SUM with reduction="mean": said.
    with pytest.warns(gac.AccumulationWarning, match="summed over its batch"):
        est.train(input_fn)  # every batch once: K * N micro-batches
    step = int(est.get_variable_value("global_step"))
    assert step == (K if counts == "effective steps" else K * N), (cls_name, step)
