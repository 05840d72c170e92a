"""The models the benchmark trains: Keras models (so ``fit`` candidates and
custom loops train the same thing), their data, and their loss."""
from __future__ import absolute_import, division, print_function

import numpy as np

from gradacc_compat import compat
from gradacc_compat.compat import tf

__all__ = ["Workload", "WORKLOADS", "get"]


class Workload(object):
    """A model factory plus data: ``build()`` gives a fresh Keras model with
    the workload's fixed initial weights; ``micro_batches(n, b)`` gives ``n``
    micro-batches of ``b`` examples as tensors."""

    def __init__(self, name, layers, input_shape, classes, input_dtype="float32",
                 vocabulary=None, description=""):
        self.name = name
        self._layers = layers
        self.input_shape = tuple(input_shape)
        self.classes = classes
        self.input_dtype = input_dtype
        self.vocabulary = vocabulary
        self.description = description
        self._initial = None

    @property
    def sparse(self):
        return self.vocabulary is not None

    def build(self):
        keras = compat.keras_module()
        model = keras.Sequential([keras.Input(shape=self.input_shape, dtype=self.input_dtype)]
                                 + self._layers(keras))
        if self._initial is None:
            rng = np.random.RandomState(7)
            self._initial = [rng.normal(scale=0.05, size=w.shape).astype(w.dtype)
                             for w in model.get_weights()]
        model.set_weights(self._initial)
        return model

    def parameters(self):
        return int(sum(np.prod(w.shape) for w in self.build().get_weights()))

    def micro_batches(self, count, batch, seed=0):
        rng = np.random.RandomState(seed)
        shape = (count * batch,) + self.input_shape
        if self.vocabulary:
            x = rng.randint(0, self.vocabulary, size=shape).astype(self.input_dtype)
        else:
            x = rng.normal(size=shape).astype(self.input_dtype)
        y = rng.randint(0, self.classes, size=(count * batch,)).astype("int32")
        return ([tf.constant(x[i * batch:(i + 1) * batch]) for i in range(count)],
                [tf.constant(y[i * batch:(i + 1) * batch]) for i in range(count)])


def loss_fn(model, x, y, global_batch=None):
    """Mean softmax cross-entropy over the batch (over ``global_batch``
    examples when given: a replica's share of a global mean)."""
    losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=model(x))
    if global_batch is None:
        return tf.reduce_mean(losses)
    return tf.reduce_sum(losses) / float(global_batch)


def _mlp(keras):
    return [keras.layers.Dense(1024, activation="relu"),
            keras.layers.Dense(1024, activation="relu"),
            keras.layers.Dense(10)]


def _embedding(keras):
    return [keras.layers.Embedding(50000, 32),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(10)]


def _deep(keras):
    return [keras.layers.Dense(64, activation="tanh") for _ in range(49)] + [keras.layers.Dense(10)]


def _wide(keras):
    return [keras.layers.Dense(16384, activation="relu"), keras.layers.Dense(10)]


def _tiny(keras):
    return [keras.layers.Dense(16, activation="relu"), keras.layers.Dense(10)]


WORKLOADS = dict((w.name, w) for w in [
    Workload("mlp", _mlp, (784,), 10,
             description="dense MLP 784-1024-1024-10 (1.9 M parameters)"),
    Workload("embedding", _embedding, (16,), 10, input_dtype="int32", vocabulary=50000,
             description="embedding 50000x32 (sparse gradients), mean-pooled, dense 10"),
    Workload("deep", _deep, (64,), 10,
             description="50 Dense 64x64 layers: 100 variables (per-variable overhead)"),
    Workload("wide", _wide, (256,), 10,
             description="256-16384-10: activations dominate memory (4.4 M parameters)"),
    Workload("tiny", _tiny, (8,), 10, description="8-16-10 (quick mode)"),
])


def get(name):
    try:
        return WORKLOADS[name]
    except KeyError:
        raise ValueError("Unknown workload %r; choose one of %s."
                         % (name, ", ".join(sorted(WORKLOADS))))
