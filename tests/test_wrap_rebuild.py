"""The wrapper as a class: found by name (pickle), built where the wrapped
optimizer's own get_config() fails, and Keras 3 variables that a gradient
overwrites."""
from __future__ import absolute_import, division, print_function

import importlib
import os
import pickle
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.compat import tf
from tests import harness as H


@pytest.mark.parametrize("family", ["keras", "legacy"])
def test_wrapper_class_is_found_by_its_qualified_name(family):
    available, reason = H.family_available(family)
    if not available:
        pytest.skip(reason)
    wrapper = gac.wrap(H.make_optimizer(family, "adam"), 2, reduction="sum")
    cls = type(wrapper)
    module = importlib.import_module(cls.__module__)
    assert getattr(module, cls.__name__) is cls
    assert pickle.loads(pickle.dumps(cls)) is cls
    # The wrapper pickles wherever the optimizer it wraps pickles.
    original = H.make_optimizer(family, "adam")
    try:
        pickle.dumps(original)
    except Exception as err:  # pylint: disable=broad-except
        with pytest.raises(type(err)):
            pickle.dumps(wrapper)
        return
    copy = pickle.loads(pickle.dumps(wrapper))
    assert type(copy) is cls and copy.steps == 2
    assert copy.get_config() == wrapper.get_config()
    assert copy.accumulator.reduction == wrapper.accumulator.reduction == "sum"


@pytest.mark.parametrize("family", ["keras", "legacy"])
def test_every_wrap_option_round_trips_through_from_config(family):
    """gac.wrap(SGD(1.0), 2, reduction="sum"): from_config (what load_model
    and clone_model call) came back with reduction "mean"."""
    available, reason = H.family_available(family)
    if not available:
        pytest.skip(reason)
    wrapper = gac.wrap(H.make_optimizer(family, "sgd", 1.0), 2, reduction="sum",
                       name="summing", nonfinite="skip")
    config = wrapper.get_config()
    assert (config["gac_steps"], config["gac_reduction"], config["gac_name"],
            config["gac_nonfinite"]) == (2, "sum", "summing", "skip")
    rebuilt = type(wrapper).from_config(config)
    assert rebuilt.get_config() == config
    acc = rebuilt.accumulator
    assert (acc.steps, acc.reduction, acc.name, acc.nonfinite) == (2, "sum", "summing", "skip")
    if compat.eager_by_default():  # and it acts on it: the sum is applied
        var = tf.Variable(np.zeros(2, "float32"))
        for grad in ([1.0, 1.0], [3.0, 3.0]):
            rebuilt.apply_gradients([(tf.constant(grad), var)])
        np.testing.assert_allclose(var.numpy(), [-4.0, -4.0])


def test_accumulator_options_round_trip_through_its_config():
    acc = gac.GradientAccumulator(steps=3, reduction="sum", name="acc3", nonfinite="raise")
    config = acc.get_config()
    assert config == {"steps": 3, "reduction": "sum", "name": "acc3", "nonfinite": "raise"}
    assert gac.GradientAccumulator.from_config(config).get_config() == config


def test_wrapper_unpickles_in_a_fresh_process():
    """The class is made on demand where nothing was wrapped yet."""
    if compat.KERAS_FLAVOUR != "keras3":
        pytest.skip("Keras 3 optimizers pickle; this Keras' (%s) may not" % compat.KERAS_FLAVOUR)
    wrapper = gac.wrap(compat.keras_module().optimizers.Adam(0.01), 3)
    handle, path = tempfile.mkstemp(suffix=".pkl")
    with os.fdopen(handle, "wb") as f:
        pickle.dump(wrapper, f)
    try:
        code = ("import pickle, sys; import tensorflow; "
                "o = pickle.load(open(sys.argv[1], 'rb')); "
                "print(type(o).__module__, type(o).__name__, o.steps, "
                "'%.4g' % float(o.learning_rate))")
        out = subprocess.check_output([sys.executable, "-c", code, path],
                                      stderr=subprocess.STDOUT, env=dict(os.environ))
    finally:
        os.remove(path)
    assert out.decode().strip().splitlines()[-1] == \
        "gradacc_compat.keras_classes AccumulatingAdam 3 0.01"


def test_optimizer_whose_get_config_fails_is_wrapped_anyway():
    """TF 1.14's Keras Ftrl.get_config raises AttributeError (a misspelt
    helper); elsewhere a subclass whose get_config raises stands in for it.
    The wrapper is a copy of the fresh optimizer, and it is exact."""
    keras = compat.keras_module()
    if keras is None:
        pytest.skip("no tf.keras")
    if not compat.eager_by_default() and compat.KERAS_FLAVOUR != "keras2":
        pytest.skip("this Keras optimizer family refuses TF1 graphs")

    class BrokenConfigSGD(keras.optimizers.SGD):
        def get_config(self):
            raise AttributeError("'BrokenConfigSGD' has no attribute '_serializer_hyperparameter'")

    makers = [lambda: BrokenConfigSGD(0.1, momentum=0.9)]
    ftrl = getattr(keras.optimizers, "Ftrl", None)
    if ftrl is not None:
        makers.append(lambda: ftrl(0.05, l1_regularization_strength=0.01))
    for make in makers:
        original = make()
        if compat.KERAS_FLAVOUR == "keras3" and isinstance(original, BrokenConfigSGD):
            # Keras 3 copies (and pickles) an optimizer through its own
            # get_config, and its fresh optimizers already hold variables:
            # there is nothing to rebuild from, so wrap says so.
            with pytest.raises(ValueError, match="cannot be copied either"):
                gac.wrap(original, 3)
            continue
        wrapper = gac.wrap(original, 3)
        assert isinstance(wrapper, type(original)) and wrapper.steps == 3
        x, y = H.make_data(9 * 4, seed=31)
        weights = []
        for steps, batch in ((1, 12), (3, 4)):
            keras.backend.clear_session()
            model = H.keras_dense_model()
            model.compile(optimizer=gac.wrap(make(), steps) if steps > 1 else make(), loss="mse")
            model.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)
            weights.append(model.get_weights())
        H.assert_close(weights[1], weights[0], "weights (%s)" % type(original).__name__)


def test_optimizer_that_can_be_neither_rebuilt_nor_copied_is_refused_clearly():
    keras = compat.keras_module()
    if keras is None:
        pytest.skip("no tf.keras")

    class Uncopyable(keras.optimizers.SGD):
        def get_config(self):
            raise NotImplementedError("no config")

        def __deepcopy__(self, memo):
            raise TypeError("cannot copy a lock")

    with pytest.raises(ValueError) as info:
        gac.wrap(Uncopyable(0.1), 2)
    message = str(info.value)
    for part in ("Uncopyable", "no config", "cannot copy a lock", compat.TF_VERSION_STRING,
                 "GradientAccumulator"):
        assert part in message


# Keras 3 ``overwrite_with_gradient``: after each micro-step of a 2-step
# cycle (gradient fed, variable value, pending value: 0 once applied).
OVERWRITE_TABLE = [
    (1.0, 0.0, 1.0),    # first micro-step: the accumulator takes the value
    (2.0, 2.0, 0.0),    # applied: the maximum, 2.0 (a mean would give 1.5)
    (-3.0, 2.0, -3.0),  # a new cycle starts from its own first value
    (-5.0, -3.0, 0.0),  # the maximum of negatives, not of zero and them
]


def test_overwrite_with_gradient_variables_take_the_cycles_maximum():
    if compat.KERAS_FLAVOUR != "keras3":
        pytest.skip("overwrite_with_gradient is Keras 3 (here: %s)" % compat.KERAS_FLAVOUR)
    keras = compat.keras_module()
    variable = keras.Variable(0.0, name="amax")
    variable.overwrite_with_gradient = True
    opt = gac.wrap(keras.optimizers.SGD(0.1), 2)
    for grad, want_var, want_acc in OVERWRITE_TABLE:
        opt.apply([tf.constant(grad)], [variable])
        assert float(np.asarray(variable.value)) == want_var, (grad, want_var)
        assert float(opt.accumulator.gradients[0].numpy()) == want_acc, (grad, want_acc)


def test_float8_dense_amax_history_matches_the_big_batch():
    """A float8 Dense (scales and amax histories are overwritten by their
    gradients) trained by fit. What does not depend on the batch size is
    exact: the inputs' amax history and scale (a mean over the cycle would
    miss the largest micro-batch). The output gradient of a micro-batch's
    mean loss is N times the big batch's, and that is what float8 quantizes:
    its amax is exactly N times the big batch's, and the kernel differs by
    float8 (e5m2) rounding of gradients of that other size."""
    if compat.KERAS_FLAVOUR != "keras3":
        pytest.skip("float8 training is Keras 3 (here: %s)" % compat.KERAS_FLAVOUR)
    keras = compat.keras_module()
    x, y = H.make_data(3 * 3 * 8, seed=41)
    x = x * np.linspace(0.5, 4.0, len(x))[:, None].astype("float32")  # amax grows
    weights = []
    for steps, batch in ((1, 24), (3, 8)):
        keras.backend.clear_session()
        model = H.keras_dense_model()
        model.quantize("float8")
        assert any(getattr(v, "overwrite_with_gradient", False) for v in model.trainable_weights)
        opt = keras.optimizers.SGD(0.1)
        model.compile(optimizer=gac.wrap(opt, steps) if steps > 1 else opt, loss="mse")
        model.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)
        weights.append(dict((v.path.split("/")[-1], np.asarray(v.value)) for v in model.weights))
    big, acc = weights
    for name in ("inputs_amax_history", "inputs_scale"):
        np.testing.assert_array_equal(acc[name], big[name], err_msg=name)
    assert big["inputs_amax_history"].max() > 0
    np.testing.assert_allclose(acc["outputs_grad_amax_history"],
                               3 * big["outputs_grad_amax_history"], rtol=1e-6)
    for name in ("kernel", "bias", "kernel_amax_history"):
        np.testing.assert_allclose(acc[name], big[name], rtol=0, atol=3e-3, err_msg=name)
