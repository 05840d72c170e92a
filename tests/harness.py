"""Run the same training code eagerly, in tf.function and in a TF1 graph.

``Harness(mode, distributed)`` owns a graph + session (graph mode) and a
MirroredStrategy over two logical CPUs (distributed); ``compile(fn)`` turns a
replica function ``fn(*tensors)`` into a Python callable taking NumPy arrays.
Helpers build small models, optimizers of each family, and read optimizer
state so tests compare it, not just the weights.
"""
from __future__ import absolute_import, division, print_function

import numpy as np
import pytest

from gradacc_compat import compat
from gradacc_compat.core import families
from gradacc_compat.tools import testing
from gradacc_compat.compat import tf

REPLICAS = testing.REPLICAS
MODES = testing.MODES
FAMILIES = ("v1", "keras", "legacy")
OPTIMIZERS = ("sgd", "momentum", "adam")


def skip_unless_mode_available(mode):
    if mode in ("eager", "function") and not compat.eager_by_default():
        pytest.skip("TF %s runs graph by default in this env (eager is the tox "
                    "'eager' factor)" % compat.TF_VERSION_STRING)


Harness = testing.Runner
_mirrored = testing.mirrored
replica_slice = testing.replica_slice
gradients = testing.gradients
optimizer_state = testing.optimizer_state


# -- a small model ----------------------------------------------------------
def make_variables(seed=0, extra_unused=False, embedding=False, resource=None):
    """The model's variables. ``resource=None`` is the environment's default
    kind (RefVariable in a TF1 graph, what estimator-era code has); Keras
    OptimizerV2 needs ``resource=True`` there."""
    values, names = initial_values(seed, extra_unused, embedding)
    return [tf.compat.v1.Variable(v, name=n, use_resource=resource)
            for v, n in zip(values, names)]


def initial_values(seed=0, extra_unused=False, embedding=False):
    """NumPy initial values (and names) of the small model's variables."""
    rng = np.random.RandomState(seed)
    values = [rng.normal(size=(4, 3)).astype("float32"),
              rng.normal(size=(3,)).astype("float32")]
    names = ["kernel", "bias"]
    if embedding:
        values.append(rng.normal(size=(10, 3)).astype("float32"))
        names.append("embedding")
    if extra_unused:
        values.append(rng.normal(size=(2,)).astype("float32"))
        names.append("unused")
    return values, names


def per_example_loss(variables, x, y):
    kernel, bias = variables[0], variables[1]
    pred = tf.tanh(tf.matmul(x, kernel) + bias)
    if len(variables) > 2 and variables[2].shape[0] == 10:
        ids = tf.cast(tf.abs(x[:, 0] * 3.0), tf.int32) % 10
        pred = pred + tf.gather(variables[2], ids)
    return tf.reduce_sum(tf.square(pred - y), axis=1)


def global_mean_loss(variables, x, y, global_batch):
    """Replica loss scaled by the global batch (tf.nn.compute_average_loss)."""
    return tf.reduce_sum(per_example_loss(variables, x, y)) / float(global_batch)


def big_batch_weights(mode, make_optimizer, x, y, batch):
    """The small model's weights after one ``make_optimizer()`` step per
    ``batch`` examples of ``x, y`` (the big batch), one process, no strategy."""
    with Harness(mode) as env:
        variables = make_variables(resource=True)
        optimizer = make_optimizer()

        def step(xb, yb):
            grads = gradients(lambda: global_mean_loss(variables, xb, yb, batch), variables)
            return optimizer.apply_gradients(list(zip(grads, variables)))
        run = env.compile(step, x[:batch], y[:batch])
        for i in range(0, len(x), batch):
            run(x[i:i + batch], y[i:i + batch])
        return env.values(variables)


def minimize_in_graph(make_optimizer, x, y, steps, batch, extra=None, state=None):
    """[(weights, optimizer state, global_step)] for the big batch and for
    ``steps`` micro-batches of ``batch``, each trained in a TF1 graph with
    ``make_optimizer(steps).minimize(loss, global_step, **extra(variables))``.
    ``state(optimizer, variables)`` lists the optimizer's variables to
    compare (default: its slots and non-slot variables)."""
    results = []
    for n, size in ((1, steps * batch), (steps, batch)):
        with Harness("graph") as h:
            variables = make_variables()
            xb = tf.compat.v1.placeholder(tf.float32, [size, 4])
            yb = tf.compat.v1.placeholder(tf.float32, [size, 3])
            gstep = tf.compat.v1.train.get_or_create_global_step()
            opt = make_optimizer(n)
            train_op = opt.minimize(global_mean_loss(variables, xb, yb, size),
                                    global_step=gstep, **(extra(variables) if extra else {}))
            h.initialize()
            for start in range(0, len(x), size):
                h.session.run(train_op, {xb: x[start:start + size], yb: y[start:start + size]})
            results.append((h.values(variables),
                            h.values((state or optimizer_state)(opt, variables)),
                            int(h.value(gstep))))
    return results


def v1_loss_scale_optimizer():
    """TF1's ``MixedPrecisionLossScaleOptimizer`` class; skips where this TF
    has none."""
    lso = getattr(getattr(tf.compat.v1.train, "experimental", None),
                  "MixedPrecisionLossScaleOptimizer", None)
    if lso is None:
        pytest.skip("no tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer")
    return lso


def make_data(count, seed=1):
    rng = np.random.RandomState(seed)
    x = rng.normal(size=(count, 4)).astype("float32")
    y = rng.normal(size=(count, 3)).astype("float32")
    return x, y


# -- optimizers ------------------------------------------------------------
def family_available(family):
    """(available, reason)."""
    if family == "legacy":
        if compat.keras_legacy_optimizers() is None:
            return False, "no usable tf.keras.optimizers.legacy here (keras %s)" % compat.KERAS_FLAVOUR
        if compat.keras_module().optimizers.SGD is compat.keras_legacy_optimizers().SGD:
            return False, "tf.keras optimizers are already OptimizerV2 here ('keras' covers them)"
    if family in ("keras", "legacy") and compat.keras_module() is None:
        return False, "no tf.keras"
    return True, ""


def skip_unless_family_runs(family, mode):
    """Skips the test where ``family`` is missing here, or refuses ``mode``
    (the TF 2.11+ Keras optimizers and Keras 3 in a TF1 graph)."""
    available, reason = family_available(family)
    if not available:
        pytest.skip(reason)
    if mode == "graph" and not families.adapter_for(make_optimizer(family, "sgd")).works_in_graph:
        pytest.skip("this Keras optimizer family refuses TF1 graphs (tested in test_equivalence)")


def make_optimizer(family, name, lr=0.1):
    lr = float(lr)
    if family == "v1":
        train = tf.compat.v1.train
        if name == "sgd":
            return train.GradientDescentOptimizer(lr)
        if name == "momentum":
            return train.MomentumOptimizer(lr, 0.9)
        return train.AdamOptimizer(lr)
    module = compat.keras_module().optimizers
    if family == "legacy":
        module = compat.keras_legacy_optimizers()
    if name == "sgd":
        return module.SGD(lr)
    if name == "momentum":
        return module.SGD(lr, momentum=0.9)
    return module.Adam(lr)


# -- Keras ------------------------------------------------------------------
def keras_dense_model():
    """Dense(3, tanh) on 4 inputs, starting from the harness's initial weights
    (call under the strategy's scope when there is one)."""
    keras = compat.keras_module()
    inputs = keras.Input(shape=(4,))
    model = keras.Model(inputs, keras.layers.Dense(3, activation="tanh")(inputs))
    model.set_weights(initial_values()[0][:2])
    return model


def keras_embedding_model(vocab):
    """Embedding(vocab, 3) on an int id input + Dense(3) on 4 features,
    added, tanh; fixed initial weights."""
    keras = compat.keras_module()
    ids = keras.Input(shape=(1,), dtype="int32")
    features = keras.Input(shape=(4,))
    looked_up = keras.layers.Reshape((3,))(keras.layers.Embedding(vocab, 3)(ids))
    out = keras.layers.Activation("tanh")(
        keras.layers.Add()([keras.layers.Dense(3)(features), looked_up]))
    model = keras.Model([ids, features], out)
    rng = np.random.RandomState(3)
    model.set_weights([w.astype("float32") for w in (rng.normal(size=(vocab, 3)),
                                                     rng.normal(size=(4, 3)),
                                                     rng.normal(size=(3,)))])
    return model


def keras_value(variable):
    """A Keras variable's value as NumPy: eagerly, or through Keras' own
    session, which holds a TF1 graph."""
    if compat.eager_by_default():
        return np.asarray(tf.convert_to_tensor(variable))
    return compat.keras_module().backend.get_value(variable)


def assert_close(actual, expected, what, rtol=1e-5, atol=1e-6):
    assert len(actual) == len(expected), "%s: %d vs %d values" % (what, len(actual), len(expected))
    for i, (a, e) in enumerate(zip(actual, expected)):
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg="%s[%d]" % (what, i))


def op_types(graph):
    """Op types in ``graph`` and in its functions (TF2 builds cond branches
    as functions)."""
    found = set(o.type for o in graph.get_operations())
    for function in graph.as_graph_def().library.function:
        found.update(node.op for node in function.node_def)
    return found
