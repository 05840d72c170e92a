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
from gradacc_compat.compat import tf

REPLICAS = 2
MODES = ("eager", "function", "graph")
FAMILIES = ("v1", "keras", "legacy")
OPTIMIZERS = ("sgd", "momentum", "adam")


def skip_unless_mode_available(mode):
    if mode in ("eager", "function") and not compat.eager_by_default():
        pytest.skip("TF %s runs graph by default in this env (eager is the tox "
                    "'eager' factor)" % compat.TF_VERSION_STRING)


class Harness(object):
    def __init__(self, mode, distributed=False):
        self.mode = mode
        self.distributed = distributed
        self.strategy = None
        self.session = None
        self._stack = []
        self._initialized = set()

    # -- context ---------------------------------------------------------
    def __enter__(self):
        if self.mode == "graph":
            graph = tf.Graph()
            self._push(graph.as_default())
            self.session = tf.compat.v1.Session(
                graph=graph, config=compat.tf1_session_config(REPLICAS))
            self._push(self.session.as_default())
        if self.distributed:
            self.strategy = _mirrored(self.mode)
            assert self.strategy.num_replicas_in_sync == REPLICAS
            self._push(self.strategy.scope())
        return self

    def _push(self, ctx):
        ctx.__enter__()
        self._stack.append(ctx)

    def __exit__(self, *exc):
        while self._stack:
            self._stack.pop().__exit__(*exc)
        if self.session is not None:
            self.session.close()

    @property
    def replicas(self):
        return self.strategy.num_replicas_in_sync if self.strategy else 1

    # -- running ---------------------------------------------------------
    def compile(self, fn, *example_args):
        """``fn(*tensors)`` run once per replica; returns f(*numpy arrays)."""
        def in_replicas(*args):
            if self.strategy is None:
                return fn(*args)
            return compat.run_in_replicas(self.strategy, fn, args)

        if self.mode == "graph":
            holders = [tf.compat.v1.placeholder(tf.float32, np.shape(a)) for a in example_args]
            out = in_replicas(*holders)
            if self.strategy is not None:
                out = tf.group(*compat.local_results(self.strategy, out))
            self.initialize()

            def run_graph(*arrays):
                return self.session.run(out, dict(zip(holders, arrays)))
            return run_graph
        call = in_replicas
        if self.mode == "function":
            # Stateful ops run without being returned (automatic control
            # dependencies); returning an Operation is an error there.
            call = tf.function(lambda *args: [in_replicas(*args), None][1])

        def run_eager(*arrays):
            return call(*[tf.constant(a, tf.float32) for a in arrays])
        return run_eager

    def run(self, fn):
        """Run a cross-replica ``fn()`` once (graph: build and run)."""
        if self.mode == "graph":
            op = fn()
            self.initialize()
            return self.session.run(op)
        if self.mode == "function":
            return tf.function(lambda: [fn(), None][1])()
        return fn()

    def value(self, x):
        if x is None:
            return None
        if self.mode == "graph":
            return np.asarray(self.session.run(tf.convert_to_tensor(x)))
        return np.asarray(tf.convert_to_tensor(x).numpy())

    def values(self, xs):
        return [self.value(x) for x in xs]

    def initialize(self):
        """Graph mode: initialize the variables created since the last call."""
        if self.mode != "graph":
            return
        fresh = [v for v in tf.compat.v1.global_variables() if id(v) not in self._initialized]
        self.session.run(tf.compat.v1.variables_initializer(fresh))
        self._initialized.update(id(v) for v in fresh)


_EAGER_STRATEGY = []


def _mirrored(mode):
    """MirroredStrategy over the logical CPUs.

    Eager and tf.function runs share one per process: separate
    MirroredStrategy objects hand out the same collective instance keys, and
    their collectives then collide in the one eager context ("Shape mismatch
    in the collective instance"), which is a property of TF, not of the code
    under test. A graph gets its own (its session has its own executor).
    """
    devices = ["/cpu:%d" % i for i in range(REPLICAS)]
    if mode == "graph":
        return compat.mirrored_strategy(devices)
    if not _EAGER_STRATEGY:
        _EAGER_STRATEGY.append(compat.mirrored_strategy(devices))
    return _EAGER_STRATEGY[0]


# -- replica helpers --------------------------------------------------------
def replica_slice(x):
    """This replica's contiguous share of a global batch."""
    ctx = tf.distribute.get_replica_context()
    n = ctx.num_replicas_in_sync
    if n == 1:
        return x
    return tf.split(x, n)[compat.replica_index(ctx)]


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


def gradients(loss_fn, variables):
    """Gradients of ``loss_fn()``: a tape where one works, else tf.gradients
    (TF1 graphs, whose default RefVariables a tape cannot watch)."""
    graph = tf.compat.v1.get_default_graph()
    if tf.executing_eagerly() or getattr(graph, "building_function", False):
        with tf.GradientTape() as tape:
            loss = loss_fn()
        return tape.gradient(loss, variables)
    return tf.gradients(loss_fn(), variables)


def global_mean_loss(variables, x, y, global_batch):
    """Replica loss scaled by the global batch (tf.nn.compute_average_loss)."""
    return tf.reduce_sum(per_example_loss(variables, x, y)) / float(global_batch)


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


def optimizer_state(optimizer, variables):
    """The optimizer's slots/moments and step counters, in a stable order."""
    optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # gac.wrap of a v1
    if hasattr(optimizer, "get_slot_names") and hasattr(optimizer, "get_slot"):
        # v1 and OptimizerV2: by name (creation order differs after a restore).
        state = [optimizer.get_slot(v, n) for v in variables
                 for n in sorted(optimizer.get_slot_names())
                 if _has_slot(optimizer, v, n)]
        if hasattr(optimizer, "_get_beta_accumulators"):
            state.extend(optimizer._get_beta_accumulators())
        if not isinstance(optimizer, tf.compat.v1.train.Optimizer):
            state.append(optimizer.iterations)
        return [s for s in state if s is not None]
    found = optimizer.variables
    found = found() if callable(found) else found
    # A Keras wrapper saves its accumulator with the optimizer's variables:
    # they are the accumulator's state, not the optimizer's.
    own = set(id(v) for v in optimizer.accumulator.variables) \
        if hasattr(type(optimizer), "accumulator") else set()
    return [v for v in found if id(v) not in own]


def _has_slot(optimizer, variable, name):
    try:
        return optimizer.get_slot(variable, name) is not None
    except KeyError:  # OptimizerV2 raises for a variable without slots
        return False


# -- Keras ------------------------------------------------------------------
def keras_dense_model():
    """Dense(3, tanh) on 4 inputs, starting from the harness's initial weights
    (call under the strategy's scope when there is one)."""
    keras = compat.keras_module()
    inputs = keras.Input(shape=(4,))
    model = keras.Model(inputs, keras.layers.Dense(3, activation="tanh")(inputs))
    model.set_weights(initial_values()[0][:2])
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
