"""Run one training step function eagerly, in ``tf.function`` or in a TF1
graph, with or without a MirroredStrategy over two logical CPUs: the
machinery behind ``gac.verify``, the pytest plugin and the project's tests.

    with Runner("function", distributed=True) as run:
        variables = make_variables()                 # under the strategy
        step = run.compile(replica_fn, x[:b], y[:b])  # f(numpy arrays)
        for xb, yb in micro_batches:
            step(xb, yb)
        weights = run.values(variables)

``setup_logical_cpus(2)`` makes the devices (TF2: before any op runs; TF 1.x
graphs get them from the session config the Runner uses).
"""
from __future__ import absolute_import, division, print_function

import numpy as np

from gradacc_compat import compat
from gradacc_compat.compat import tf

__all__ = ["REPLICAS", "Runner", "available_modes", "setup_logical_cpus", "logical_cpus",
           "mirrored", "replica_slice", "gradients", "loss_and_gradients", "optimizer_state",
           "facts"]

REPLICAS = 2
#: Execution modes, each a way a training step can run.
MODES = ("eager", "function", "graph")


def available_modes():
    """The modes this process can run: eager and ``tf.function`` where ops run
    eagerly by default (TF2, TF 1.x after ``enable_eager_execution``), else
    the TF1 graph and session."""
    if compat.eager_by_default():
        return ("eager", "function") if compat.HAS_TF_FUNCTION else ("eager",)
    return ("graph",)


def logical_cpus():
    """How many CPU devices a strategy can use in this process's mode."""
    if not compat.eager_by_default():
        return REPLICAS  # every Runner session is made with REPLICAS CPUs
    return len([d for d in compat.visible_devices() if ":CPU:" in d.upper()])


def setup_logical_cpus(count=REPLICAS):
    """Make ``count`` logical CPUs for MirroredStrategy, or say why not.

    Returns None on success, else the reason (a string): TF2 can split the
    CPU only before its runtime starts; TF 1.x eager takes the device count
    in ``enable_eager_execution(config=...)``, the process's first TF call.
    """
    if compat.TF1:
        if logical_cpus() >= count:
            return None
        return ("TF %s eager has %d CPU device(s); call tf.compat.v1.enable_eager_execution("
                "config=gradacc_compat.compat.tf1_session_config(%d)) as the process's first "
                "TF call" % (compat.TF_VERSION_STRING, logical_cpus(), count))
    try:
        compat.split_cpu(count)  # listing devices first would initialize them
    except RuntimeError as err:
        if logical_cpus() >= count:
            return None
        return ("TensorFlow's devices were initialized before the CPU could be split "
                "(%s); call gradacc_compat.tools.testing.setup_logical_cpus(%d) before any TF op, "
                "or run in a fresh process" % (err, count))
    return None


_EAGER_STRATEGY = []


def mirrored(mode):
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


class Runner(object):
    """A mode (``"eager"``, ``"function"``, ``"graph"``) and an optional
    MirroredStrategy, entered as a context: graph mode owns a fresh graph and
    session; the strategy's scope is entered."""

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
            self.strategy = mirrored(self.mode)
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
    def compile(self, fn, *example_args, **options):
        """``fn(*tensors)`` run once per replica; returns f(*numpy arrays).
        ``outputs=True`` (no strategy): f returns fn's tensors as NumPy
        values (fn returns tensors, not operations)."""
        outputs = options.pop("outputs", False)
        if options or (outputs and self.strategy is not None):
            raise TypeError("compile(fn, *example_args, outputs=False): outputs=True runs "
                            "without a strategy; received %r" % (options,))

        def in_replicas(*args):
            if self.strategy is None:
                return fn(*args)
            return compat.run_in_replicas(self.strategy, fn, args)

        if self.mode == "graph":
            holders = [tf.compat.v1.placeholder(_dtype(a), np.shape(a)) for a in example_args]
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
            call = tf.function(in_replicas if outputs else
                               lambda *args: [in_replicas(*args), None][1])

        def run_eager(*arrays):
            out = call(*[tf.constant(a, _dtype(a)) for a in arrays])
            return [np.asarray(t) for t in out] if outputs else out
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
        """Graph mode: initialize the variables created since the last call,
        except those already given a value in this session (a model factory's
        ``set_weights`` runs in it: Keras finds it as the default session)."""
        if self.mode != "graph":
            return
        fresh = [v for v in tf.compat.v1.global_variables() if id(v) not in self._initialized]
        if fresh:
            ready = self.session.run([tf.compat.v1.is_variable_initialized(v) for v in fresh])
            self.session.run(tf.compat.v1.variables_initializer(
                [v for v, done in zip(fresh, ready) if not done]))
        self._initialized.update(id(v) for v in fresh)


def _dtype(array):
    """float32 for any float input (NumPy defaults to float64), else as is."""
    dtype = np.asarray(array).dtype
    return tf.float32 if np.issubdtype(dtype, np.floating) else tf.as_dtype(dtype)


# -- replica helpers --------------------------------------------------------
def replica_slice(x):
    """This replica's contiguous share of a global batch."""
    ctx = tf.distribute.get_replica_context()
    n = ctx.num_replicas_in_sync
    if n == 1:
        return x
    return tf.split(x, n)[compat.replica_id_in_cluster(ctx)]


def gradients(loss_fn, variables):
    """Gradients of ``loss_fn()``: a tape where one works, else tf.gradients
    (TF1 graphs, whose default RefVariables a tape cannot watch)."""
    return loss_and_gradients(loss_fn, variables)[1]


def loss_and_gradients(loss_fn, variables):
    """``(loss_fn(), its gradients)``, as :func:`gradients` takes them."""
    graph = tf.compat.v1.get_default_graph()
    if tf.executing_eagerly() or getattr(graph, "building_function", False):
        with tf.GradientTape() as tape:
            loss = loss_fn()
        return loss, tape.gradient(loss, variables)
    loss = loss_fn()
    return loss, tf.gradients(loss, variables)


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


def facts():
    """What a downstream tox matrix can branch on, as a plain dict."""
    return {
        "tf_version": compat.TF_VERSION,
        "tf_version_string": compat.TF_VERSION_STRING,
        "tf1": compat.TF1,
        "keras": compat.KERAS_FLAVOUR,
        "eager_by_default": compat.eager_by_default(),
        "modes": available_modes(),
        "has_estimator": compat.HAS_ESTIMATOR,
        "has_contrib_distribute": bool(compat.HAS_CONTRIB_DISTRIBUTE),
        "has_tf_function": compat.HAS_TF_FUNCTION,
    }
