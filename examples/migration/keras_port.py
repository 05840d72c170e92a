"""Its Keras port, as SPECs for ``replay``: the same model as a
``Sequential``, the loss from ``tf.keras.losses``, Keras ``Adam``, four
micro-batches of 8 per effective step under ``GradientAccumulator``.

``spec``: ``Adam(0.01)``, whose default epsilon is 1e-7 -- the two part.
``spec_fixed``: ``Adam(0.01, epsilon=1e-8)`` -- they agree.

    python -m gradacc_compat replay examples/migration/keras_port.py:spec --against old.npz
"""
from __future__ import absolute_import, division, print_function

import tensorflow as tf

LOSS_WEIGHT = 1e-6


def make_model():
    return tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="tanh", name="hidden", input_shape=(6,)),
        tf.keras.layers.Dense(2, name="out")])


def weighted_mse(y_true, y_pred):
    return LOSS_WEIGHT * tf.keras.losses.MSE(y_true, y_pred)


def spec():
    return dict(model=make_model, loss=weighted_mse, steps=4,
                optimizer=lambda: tf.keras.optimizers.Adam(0.01))


def spec_fixed():
    return dict(spec(), optimizer=lambda: tf.keras.optimizers.Adam(0.01, epsilon=1e-8))
