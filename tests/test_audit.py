"""First-use audits: what makes accumulation differ from the big batch is
said once per accumulator, through warnings / logging, never print."""
from __future__ import absolute_import, division, print_function

import logging
import warnings

import numpy as np
import pytest

import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.core import audit
from gradacc_compat.compat import tf

from tests import harness as H


def _keras():
    keras = compat.keras_module()
    if keras is None:
        pytest.skip("no Keras here")
    return keras


def _bn_model(keras):
    inputs = keras.Input(shape=(4,))
    hidden = keras.layers.BatchNormalization(name="bn")(keras.layers.Dense(5)(inputs))
    return keras.Model(inputs, keras.layers.Dense(3)(hidden))


def _said(caught):
    return [str(w.message) for w in caught if issubclass(w.category, gac.AccumulationWarning)]


def test_batch_dependent_layers_are_named_through_nested_models():
    keras = _keras()
    inner = _bn_model(keras)
    inputs = keras.Input(shape=(4,))
    outer = keras.Model(inputs, keras.layers.Dropout(0.5, name="drop")(inner(inputs)))
    found = audit.batch_dependent_layers(outer)
    assert ("bn", "BatchNormalization", "batch statistics") in \
        [(n, c.replace("V2", "").replace("V1", ""), k) for n, c, k in found]
    assert ("drop", "Dropout", "random") in found
    assert audit.batch_dependent_layers(H.keras_dense_model()) == []


@pytest.mark.skipif(not compat.eager_by_default(), reason="a tape-based custom loop")
def test_custom_loop_with_batch_normalization_warns_once_naming_the_layer():
    keras = _keras()
    model = _bn_model(keras)
    x, y = H.make_data(8)
    acc = gac.GradientAccumulator(steps=2)
    optimizer = keras.optimizers.SGD(0.1)

    def train(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
        acc.step(optimizer, tape.gradient(loss, model.trainable_variables),
                 model.trainable_variables)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(0, 8, 2):
            train(tf.constant(x[i:i + 2]), tf.constant(y[i:i + 2]))
    said = _said(caught)
    assert len(said) == 1, said
    assert "layer 'bn' (BatchNormalization" in said[0] and "LayerNormalization" in said[0]


def test_fit_with_a_plain_model_says_nothing_and_with_batch_norm_warns():
    keras = _keras()
    if compat.KERAS_FLAVOUR == "keras2" and not compat.eager_by_default() and \
            not hasattr(keras.optimizers, "SGD"):
        pytest.skip("no Keras SGD")
    x, y = H.make_data(8)
    for make, expected in ((H.keras_dense_model, 0), (lambda: _bn_model(keras), 1)):
        model = make()
        model.compile(optimizer=gac.wrap(H.make_optimizer("keras", "sgd"), 2), loss="mse")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(x, y, batch_size=2, epochs=1, shuffle=False, verbose=0)
        said = [m for m in _said(caught) if "layer 'bn'" in m]
        assert len(said) == expected, _said(caught)


def test_replicas_are_counted_in_a_log_line_once(env, caplog):
    if not env.distributed:
        pytest.skip("the replica audit is about several replicas")
    variables = H.make_variables(resource=True)
    acc = gac.GradientAccumulator(steps=3)
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)

    def replica_fn(x, y):
        grads = H.gradients(lambda: H.global_mean_loss(variables, H.replica_slice(x),
                                                        H.replica_slice(y), 4), variables)
        return acc.step(optimizer, grads, variables)

    x, y = H.make_data(4)
    with caplog.at_level(logging.WARNING, logger="gradacc_compat"):
        step = env.compile(replica_fn, x, y)
        for _ in range(3):
            step(x, y)
    lines = [r.getMessage() for r in caplog.records if r.name == "gradacc_compat"]
    assert len(lines) == 1, lines
    assert "accumulating over 2 replicas with steps=3: each update averages 6" in lines[0]
    assert np.isfinite(env.values(variables)[0]).all()
