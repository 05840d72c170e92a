"""The training a TF 1.14 graph script did, as a SPEC for ``record``: a
two-layer regression model, ``tf.compat.v1.train.AdamOptimizer`` (whose
default epsilon is 1e-8), a loss weighted by 1e-6 (an auxiliary loss's
weight: its gradients are near 1e-7, where Adam's epsilon shows), three
effective batches of 32 examples.

    python2.7 -m gradacc_compat record examples/migration/tf114_adam.py:spec --out old.npz
"""
from __future__ import absolute_import, division, print_function

import numpy as np
import tensorflow as tf

LOSS_WEIGHT = 1e-6


def make_model():
    inputs = tf.keras.Input(shape=(6,))
    hidden = tf.keras.layers.Dense(8, activation="tanh", name="hidden")(inputs)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(2, name="out")(hidden))


def weighted_mse(y_true, y_pred):
    return LOSS_WEIGHT * tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)


def batches():
    rng = np.random.RandomState(1)
    return [(rng.normal(size=(32, 6)).astype("float32"),
             rng.normal(size=(32, 2)).astype("float32")) for _ in range(3)]


def spec():
    return dict(model=make_model, loss=weighted_mse, batch=batches(), steps=1,
                effective_steps=3,
                optimizer=lambda: tf.compat.v1.train.AdamOptimizer(0.01))
