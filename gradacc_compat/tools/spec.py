"""What ``verify`` (and ``record`` / ``replay``) train: a user's SPEC --
``MODULE:FUNCTION`` or ``FILE.py:FUNCTION`` returning ``gac.verify``'s
arguments -- or, without one, a built-in model built the same way on every
TensorFlow."""
from __future__ import absolute_import, division, print_function

import importlib
import os
import sys

import numpy as np

from gradacc_compat import compat
from gradacc_compat.compat import tf

__all__ = ["builtin", "check_batch", "load_spec", "optimizers", "Subject", "keras_loss"]


def builtin(optimizer=None):
    """A small Keras model (two Dense layers) on synthetic data."""
    keras = compat.keras_module()
    if keras is None:
        raise RuntimeError("the built-in verify model needs Keras; pass your own `loss` "
                           "and `variables`")
    rng = np.random.RandomState(0)
    x = rng.normal(size=(32, 6)).astype("float32")
    y = rng.normal(size=(32, 2)).astype("float32")

    def make_model():
        inputs = keras.Input(shape=(6,))
        hidden = keras.layers.Dense(8, activation="tanh")(inputs)
        return keras.Model(inputs, keras.layers.Dense(2)(hidden))

    if optimizer is None:
        optimizer = {"keras.optimizers.SGD(momentum)":
                     lambda: keras.optimizers.SGD(0.1, momentum=0.9),
                     "keras.optimizers.Adam": lambda: keras.optimizers.Adam(0.01)}
        if compat.KERAS_FLAVOUR != "keras3":  # v1 optimizers take tf.Variables only
            optimizer["tf.compat.v1.train.MomentumOptimizer"] = \
                lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)
    return make_model, optimizer, (x, y), "mse"


def load_spec(spec):
    """``module:function`` or ``path/file.py:function`` -> verify kwargs."""
    if not spec:
        return {}
    target, _, name = spec.rpartition(":")
    if not target or not name:
        raise SystemExit("verify: expected MODULE:FUNCTION or FILE.py:FUNCTION, got %r" % spec)
    if target.endswith(".py"):
        directory, module = os.path.split(os.path.abspath(target))
        sys.path.insert(0, directory)
        target = module[:-3]
    elif os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    kwargs = getattr(importlib.import_module(target), name)()
    if not isinstance(kwargs, dict):
        raise SystemExit("verify: %s must return a dict of gac.verify arguments (model, "
                         "optimizer, batch, steps, loss); it returned %r" % (spec, kwargs))
    return kwargs


def check_batch(batch, steps):
    """``batch`` as ``(x, y)`` NumPy arrays that split into ``steps``."""
    try:
        x, y = batch
    except (TypeError, ValueError):
        raise TypeError("`batch` must be (x, y): one effective batch of NumPy arrays. "
                        "Received %r." % (type(batch).__name__,))
    x, y = np.asarray(x), np.asarray(y)
    if len(x) != len(y):
        raise ValueError("`batch`: x has %d examples, y has %d." % (len(x), len(y)))
    if len(x) % steps or len(x) < steps:
        raise ValueError("`batch` has %d examples, which do not split into steps=%d "
                         "micro-batches; give a multiple of %d." % (len(x), steps, steps))
    return x, y


def optimizers(optimizer):
    """``optimizer`` (a factory, or a dict of them by label) as sorted
    ``[(label, factory)]``."""
    if isinstance(optimizer, dict):
        return sorted(optimizer.items())
    if optimizer is None or not callable(optimizer) or hasattr(optimizer, "apply_gradients"):
        raise TypeError("`optimizer` must be a function that returns a NEW optimizer (each "
                        "row needs a fresh one), e.g. optimizer=lambda: "
                        "tf.keras.optimizers.Adam(1e-3). Received %r." % (optimizer,))
    made = optimizer()
    return [(type(made).__name__, optimizer)]


class Subject(object):
    """The model under test: builds (or restores) it and gives its
    trainable variables, every weight, and its mean loss ``fn(x, y)``."""

    def __init__(self, model, loss, variables):
        self.model, self.loss, self.variables = model, loss, variables
        self.initial = None  # weights' values at the first build
        self.last_model = None
        if model is None and (loss is None or variables is None):
            raise ValueError("verify needs `model` (a Keras model or a function returning "
                             "one), or `loss=fn(x, y)` with `variables=[...]`. Received "
                             "model=%r, loss=%r, variables=%r." % (model, loss, variables))
        self.factory = model is not None and not hasattr(model, "trainable_variables")
        if model is not None and not self.factory and not callable(model):
            raise TypeError("`model` must be a Keras model or a function that returns one; "
                            "received %r (type %s)." % (model, type(model).__name__))

    @property
    def rebuildable(self):
        """Whether each row can build its own copy (strategies, TF1 graphs)."""
        return self.factory

    def build(self, example):
        """``(trainable variables, every weight, loss_fn, model)``."""
        if self.model is None:
            variables = list(self.variables)
            return variables, variables, self.loss, None
        model = self.model() if self.factory else self.model
        if not getattr(model, "built", True) or not model.weights:
            model(tf.constant(example))
        self.last_model = model
        loss = keras_loss(self.loss)

        def loss_fn(x, y):
            return tf.reduce_mean(loss(y, model(x, training=True)))
        return list(model.trainable_variables), list(model.weights), loss_fn, model


def keras_loss(loss):
    if callable(loss):
        return loss
    keras = compat.keras_module()
    if keras is None:
        raise ValueError("loss=%r names a Keras loss, but no Keras loads here; pass a "
                         "function loss(y_true, y_pred)." % (loss,))
    return keras.losses.get(loss or "mse")
