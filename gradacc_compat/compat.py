"""Everything gradacc_compat knows about the TensorFlow it runs on.

This is the ONLY module that looks at version numbers or probes for symbols.
It turns what it finds into named facts (``TF_VERSION``, ``KERAS_FLAVOUR``,
``HAS_CONTRIB_DISTRIBUTE`` ...) and small adapters with one meaning on every
version (``run_in_replicas``, ``local_results``, ``split_cpu``).  The rest of
the package, the tests and the benchmark use those names and never branch on
``tf.__version__`` themselves.

Each shim says which releases need it, so it can be deleted when the oldest
supported TensorFlow moves past it.
"""
from __future__ import absolute_import, division, print_function

import contextlib
import os
import re
import sys

try:
    import tensorflow as tf
except ImportError as _err:  # pragma: no cover - exercised without TF only
    raise ImportError(
        "gradacc_compat needs TensorFlow, but `import tensorflow` failed (%s). "
        "Install the build you want first, for example `pip install tensorflow` "
        "(or tensorflow-cpu, or tensorflow-gpu==1.15.5 for TF 1.x), or "
        "`pip install gradacc_compat[tf]`." % (_err,))

__all__ = [
    "tf", "TF_VERSION", "TF_VERSION_STRING", "TF1", "KERAS_FLAVOUR",
    "KERAS_VERSION", "HAS_CONTRIB_DISTRIBUTE", "HAS_STRATEGY_RUN",
    "HAS_TF_FUNCTION", "HAS_ESTIMATOR", "release_tuple", "executing_eagerly",
    "eager_by_default", "run_in_replicas", "local_results", "replica_index",
    "strategy_scope", "nullcontext", "in_cross_replica_context", "get_strategy",
    "split_cpu", "tf1_session_config", "mirrored_strategy", "keras_module",
    "keras_legacy_optimizers", "keras_track_graph_variables",
    "keras_register_serializable", "keras_fit_per_replica_batch", "keras_fit_batch_size",
    "visible_devices", "progress_bar", "HAS_DO_NOT_CONVERT", "do_not_convert",
    "multi_worker_mirrored_strategy", "cross_device_ops", "eager_assign", "eager_assign_add",
    "xla_function_kwargs", "keras_own_accumulation", "graph_entered",
    "replica_id_in_cluster", "shard_by_data", "collectives_in_tf1_graph",
]


def release_tuple(version):
    """``"2.16.0rc0"`` -> ``(2, 16, 0)``: pre-releases count as their release."""
    parts = re.findall(r"\d+", version.split("-")[0])[:3]
    parts = [int(p) for p in parts] + [0] * (3 - len(parts))
    # "2.16.0rc0" -> ["2", "16", "0", "0"]: findall also sees the rc number,
    # which [:3] drops.
    return tuple(parts)


TF_VERSION_STRING = tf.__version__
TF_VERSION = release_tuple(tf.__version__)
#: TensorFlow 1.x: graph by default, tf.contrib present, v1 strategies.
TF1 = TF_VERSION < (2, 0, 0)

if TF1:
    # TF 1.14 (DeprecationWrapper) and 1.15 (TFModuleWrapper) wrap the
    # `tensorflow` module to warn about renamed symbols: every `tf.X` lookup
    # through the wrapper costs ~3 us, some 30 lookups a variable per eager
    # micro-step here. The package (and what imports `tf` from here) uses
    # the module itself; a user's own `import tensorflow` is unchanged.
    for _attribute in ("_dw_wrapped_module", "_tfmw_wrapped_module"):
        tf = getattr(tf, _attribute, tf)

# ---------------------------------------------------------------- symbols
#: ``strategy.run`` exists from TF 2.2; ``experimental_run_v2`` 1.15 -> 2.3.
HAS_STRATEGY_RUN = hasattr(tf.distribute.Strategy, "run")
#: ``tf.function`` (1.14 has it, usable in eager mode only).
HAS_TF_FUNCTION = hasattr(tf, "function")
#: ``tf.estimator`` is shipped up to 2.15 and gone from 2.16.
HAS_ESTIMATOR = TF_VERSION < (2, 16, 0) and hasattr(tf, "estimator")


def _probe_contrib_distribute():
    # TODO: remove when TF 1.15 is no longer supported (tf.contrib is 1.x only).
    if not TF1:
        return False
    try:
        from tensorflow.contrib import distribute  # noqa: F401
    except ImportError:
        return False
    return True


#: ``tf.contrib.distribute`` (TF 1.14 and 1.15 only).  Probed lazily: importing
#: tf.contrib costs seconds, so the fact is computed on first use.
class _LazyFact(object):
    def __init__(self, probe):
        self._probe = probe
        self._value = None

    def __bool__(self):
        if self._value is None:
            self._value = bool(self._probe())
        return self._value

    __nonzero__ = __bool__  # Python 2

    def __repr__(self):
        return repr(bool(self))


HAS_CONTRIB_DISTRIBUTE = _LazyFact(_probe_contrib_distribute)


# ------------------------------------------------------------------ Keras
def keras_module():
    """The Keras that ``tf.keras`` resolves to, or ``None`` if it cannot load."""
    try:
        return tf.keras
    except (ImportError, AttributeError):  # 2.16+ with no keras installed
        return None


def _keras_flavour():
    """("keras2" | "tf_keras" | "keras3" | None, version string or None)."""
    keras = keras_module()
    if keras is None:
        return None, None
    try:
        root = keras.optimizers.Optimizer.__module__.split(".")[0]
    except (ImportError, AttributeError):
        return None, None
    if root == "tf_keras":
        return "tf_keras", getattr(sys.modules.get("tf_keras"), "__version__", None)
    if root == "keras":
        version = getattr(sys.modules.get("keras"), "__version__", "2")
        return ("keras3" if release_tuple(version) >= (3, 0, 0) else "keras2"), version
    # tensorflow.python.keras (TF <= 2.5): Keras 2 built into TF.
    return "keras2", getattr(keras, "__version__", None)


#: Which Keras ``tf.keras`` is: "keras2" (built in / keras 2.x), "tf_keras"
#: (TF >= 2.16 with TF_USE_LEGACY_KERAS=1), "keras3", or None.
KERAS_FLAVOUR, KERAS_VERSION = _keras_flavour()


def keras_legacy_optimizers():
    """``tf.keras.optimizers.legacy`` (OptimizerV2) where it is usable, else None.

    2.9-2.15 and tf_keras have it; Keras 3 keeps the name but raises on use.
    """
    keras = keras_module()
    if keras is None or KERAS_FLAVOUR == "keras3":
        return None
    legacy = getattr(keras.optimizers, "legacy", None)
    return legacy if legacy is not None and hasattr(legacy, "SGD") else None


def keras_track_graph_variables(variables):
    """Let Keras' TF1-graph session initialize ``variables``.

    In a TF1 graph, ``model.fit`` initializes only the variables Keras itself
    tracks (``tensorflow.python.keras.backend.track_variable``, not exported
    as tf.keras.backend.track_variable). Eager runs need nothing.
    # TODO: remove when TF 1.15 is no longer supported.
    """
    if eager_by_default() or KERAS_FLAVOUR != "keras2":
        return
    try:
        from tensorflow.python.keras import backend as keras_backend
    except ImportError:
        return
    track = getattr(keras_backend, "track_variable", None)
    if track is not None:
        for variable in variables:
            track(variable)


def progress_bar(target, stateful_metrics=()):
    """Keras' ``Progbar`` (``tf.keras.utils.Progbar``: TF 1.14 to 2.15,
    ``tf_keras`` and Keras 3 alike), or ``None`` where no Keras loads."""
    keras = keras_module()
    progbar = getattr(getattr(keras, "utils", None), "Progbar", None)
    if progbar is None:
        return None
    return progbar(target, stateful_metrics=list(stateful_metrics))


def keras_register_serializable(cls, package):
    """Register ``cls`` for Keras (de)serialization, where Keras offers it
    (``tf.keras.utils.register_keras_serializable``: TF >= 2.1 and Keras 3)."""
    keras = keras_module()
    register = getattr(getattr(keras, "utils", None), "register_keras_serializable", None)
    if register is not None:
        register(package=package)(cls)
    return cls


# -------------------------------------------------------------- execution
def executing_eagerly():
    return tf.executing_eagerly()


def eager_by_default():
    """True where ops outside any function run eagerly (TF2, or TF1 + enable)."""
    # tf.compat.v1.executing_eagerly_outside_functions is public from 1.15;
    # 1.14 has only the framework function.
    from tensorflow.python.framework import ops
    return ops.executing_eagerly_outside_functions()


def graph_entered():
    """A context that enters the default graph explicitly (``as_default()``)
    where the code runs in a graph that is not building a function, so that
    ``tf.init_scope()`` inside a function built here -- a ``tf.cond``
    branch, under TF2 control flow -- lifts to that graph. Elsewhere
    (eagerly, inside a function) it does nothing.

    Why: after ``tf.compat.v1.disable_eager_execution()`` on TF2, code that
    builds into the implicit global graph (never entered with
    ``as_default()``, as TF1-style scripts do) leaves no graph on the graph
    stack, while the eager context made at import keeps its eager entry on
    the context-switch stack. ``init_scope`` in a cond branch then skips the
    branch's function graph and lands in EAGER mode: a v1 optimizer's
    ``apply_gradients`` (which creates its slots under ``init_scope``)
    creates Adam's ``beta1_power`` as an eager variable, which fails under
    ``replica_device_setter`` ("/job:ps/replica:0/task:0/device:CPU:0
    unknown device"). Measured with plain TF (a ``tf.cond`` branch asking
    ``tf.executing_eagerly()`` under ``init_scope``): eager on 2.0.4 and
    2.4.4, graph on 2.1.4 (whose context-switch stack starts empty) and in
    any graph entered with ``as_default()``. The parameter-server test's
    worker met it on 2.0.4 only (on 2.4.4 its optimizer's state stayed in
    the graph, for reasons not traced). Entering the graph is what every
    ``with graph.as_default():`` script does already. It is entered only
    where the trap can be (TF2 after ``disable_eager_execution()``): entered
    in every graph (TF2's ``tf.Graph().as_default()`` with eager on), it
    made later ``tf.function`` tests of the TF 2.0 suite fail ("called
    under bool"), for reasons not traced.
    """
    if TF1 or tf.executing_eagerly() or not _eager_disabled():
        return nullcontext()
    graph = tf.compat.v1.get_default_graph()
    if getattr(graph, "building_function", False):
        return nullcontext()  # init_scope finds the outer graph on the stack
    return graph.as_default()


def _eager_disabled():
    """TF2: whether ``disable_eager_execution()`` was called in this process
    (TF's ``context.default_execution_mode``, 2.0 -> 2.21)."""
    from tensorflow.python.eager import context
    return context.default_execution_mode == context.GRAPH_MODE


def xla_function_kwargs():
    """``tf.function`` keyword arguments that compile it with XLA, or None:
    ``jit_compile`` from 2.5, ``experimental_compile`` 2.1 -> 2.4, none on
    1.x and 2.0."""
    if TF_VERSION >= (2, 5, 0):
        return {"jit_compile": True}
    if TF_VERSION >= (2, 1, 0):
        return {"experimental_compile": True}
    return None


def keras_own_accumulation():
    """Whether Keras optimizers take ``gradient_accumulation_steps`` (Keras 3)."""
    return KERAS_FLAVOUR == "keras3"


# ----------------------------------------------------------- distribution
def get_strategy():
    return tf.distribute.get_strategy()


def passed_as_arguments(variables):
    """The variables among ``variables`` that the ``tf.function`` being
    traced received as arguments, not from its closure. TF 2.x releases that
    trace variables by type (2.21 seen; 2.4 retraces per variable instead)
    list such a variable's external handle among the function graph's
    inputs, and reuse the trace for other variables of the same shapes and
    dtypes; a variable from the closure is captured, not an input. (A
    closure variable of the same shape and dtype as a variable argument is
    counted as one: the signature names no variable.)"""
    graph = tf.compat.v1.get_default_graph()
    if tf.executing_eagerly() or not getattr(graph, "building_function", False):
        return []
    inputs = set(id(t) for t in graph.inputs)
    # 2.11 lists no handle there, but the trace's signature has a
    # VariableSpec (shape, dtype) for each variable argument.
    try:
        signature = tf.nest.flatten(getattr(graph, "structured_input_signature", None) or ())
    except (TypeError, ValueError):
        signature = []
    specs = [(tuple(tf.TensorShape(s.shape).as_list()), tf.as_dtype(s.dtype))
             for s in signature if type(s).__name__ == "VariableSpec"
             and tf.TensorShape(s.shape).rank is not None]

    def spec_of(variable):
        shape = tf.TensorShape(variable.shape)
        if shape.rank is None:
            return None
        return tuple(shape.as_list()), tf.as_dtype(variable.dtype).base_dtype

    return [v for v in variables
            if id(getattr(v, "handle", None)) in inputs or spec_of(v) in specs]


def spans_workers(strategy):
    """Whether ``strategy``'s replicas live in more than this process
    (MultiWorkerMirroredStrategy, TF 1.x collectives): fewer local replicas
    than ``num_replicas_in_sync``."""
    if strategy.num_replicas_in_sync == 1:
        return False  # the default strategy, which has no worker_devices
    try:
        devices = strategy.extended.worker_devices
    except (AttributeError, RuntimeError, NotImplementedError):
        return False
    return bool(devices) and strategy.num_replicas_in_sync > len(devices)


def in_cross_replica_context():
    return tf.distribute.in_cross_replica_context()


#: ``tf.autograph.experimental.do_not_convert`` (TF >= 1.15; 1.14 has none).
HAS_DO_NOT_CONVERT = hasattr(tf.autograph.experimental, "do_not_convert")


def do_not_convert(fn):
    """Keep AutoGraph from rewriting ``fn`` when a ``tf.function`` calls it.
    On 1.14 ``fn`` is converted, and must be plain enough for that."""
    return tf.autograph.experimental.do_not_convert(fn) if HAS_DO_NOT_CONVERT else fn


def _raw_writers():
    """The kernels behind ``Variable.assign``/``assign_add`` (1.14 -> 2.21:
    ``gen_resource_variable_ops``). Eagerly, the ``Variable`` methods spend
    several times the kernel's time in Python (distribution checks, a lazy
    read they return); a loop over a hundred variables feels it."""
    from tensorflow.python.ops import gen_resource_variable_ops as ops
    return ops.assign_variable_op, ops.assign_add_variable_op


_ASSIGN, _ASSIGN_ADD = _raw_writers()


def eager_assign(variable, value):
    """``variable.assign(value)``, eagerly, returning nothing: ``variable``
    is one device's resource variable (a replica's component, not a
    distributed variable) and ``value`` a tensor of its dtype."""
    _ASSIGN(variable.handle, value)


def eager_assign_add(variable, value):
    """``variable.assign_add(value)``, as :func:`eager_assign`."""
    _ASSIGN_ADD(variable.handle, value)


#: TF 1.14's tf.function hands a variable created while it traces (under
#: init_scope too) to its own creator, whose variable keeps a second copy
#: of its initial value alive (measured: a 16 MiB variable raised the
#: resting RSS by 32 MiB; created directly, by 16; 1.15 and later: 16).
_TRACE_CREATOR_KEEPS_INITIAL_VALUE = TF_VERSION < (1, 15, 0)


@contextlib.contextmanager
def direct_variables():
    """Creates this scope's variables as plain resource variables where
    TF 1.14 would keep their initial values twice: eagerly (under
    ``init_scope``), on one device. Elsewhere, and under a strategy (whose
    creator makes the per-replica components), it changes nothing."""
    if not (_TRACE_CREATOR_KEEPS_INITIAL_VALUE and tf.executing_eagerly()
            and not tf.distribute.has_strategy()):
        yield
        return
    from tensorflow.python.ops import resource_variable_ops
    accepted = _arguments(resource_variable_ops.ResourceVariable.__init__)

    def create(next_creator, **kwargs):
        del next_creator  # tf.function's, among others
        return resource_variable_ops.ResourceVariable(
            **dict((k, v) for k, v in kwargs.items() if k in accepted))

    with tf.variable_creator_scope(create):
        yield


def _arguments(function):
    import inspect
    spec = getattr(inspect, "getfullargspec", None) or inspect.getargspec
    return set(spec(function).args)


def run_as_call(cond_output):
    """Asks TF to run the ``tf.cond`` whose output is ``cond_output`` as a
    function call instead of lowering it into the graph (TF 2 functions
    lower an ``If`` op's branches to Switch/Merge, so every op of an
    untaken branch still passes a dead signal, each micro-step). For a cond
    that rarely runs its big branch -- the apply -- one call costs less.
    Where the cond is not an ``If`` op (TF1 graphs, TF 1.x functions) it
    stays as it is. So it does where the resources it takes are not known
    to share one device (a parameter server's variables and a worker's, a
    GPU's and the host's): one call is placed on one device, and TF
    refuses a call whose resources live on two ("Cannot place the graph
    because a reference or resource edge connects colocation groups")."""
    op = cond_output.op
    while op.type == "Identity" and op.inputs:
        op = op.inputs[0].op
    if op.type not in ("If", "StatelessIf"):
        return
    devices = set(_resource_device(t) for t in op.inputs if t.dtype == tf.resource)
    if len(devices) != 1 or None in devices:
        return
    from tensorflow.core.framework import attr_value_pb2
    op._set_attr("_lower_using_switch_merge", attr_value_pb2.AttrValue(b=False))


def _resource_device(tensor):
    """The device of the resource ``tensor`` holds (through a function's
    capture, to the captured handle), or None when the graph does not say."""
    graph = tensor.graph
    internal = list(getattr(graph, "internal_captures", None) or [])
    if tensor.op.type == "Placeholder" and internal:
        for outer, inner in zip(graph.external_captures, internal):
            if inner is tensor:
                tensor = outer
                break
    device = getattr(tensor, "device", None)
    return tf.DeviceSpec.from_string(device).to_string() if device else None


def run_in_replicas(strategy, fn, args=()):
    """Run ``fn(*args)`` once per replica, in replica context.

    ``strategy.run`` (2.2+), ``experimental_run_v2`` (1.15-2.3), else
    ``extended.call_for_each_replica`` (the v1 API, present everywhere and the
    only one on 1.14 / tf.contrib strategies).
    """
    if HAS_STRATEGY_RUN:
        return strategy.run(fn, args=args)
    if hasattr(strategy, "experimental_run_v2"):
        return strategy.experimental_run_v2(fn, args=args)
    return strategy.extended.call_for_each_replica(fn, args=args)


def local_results(strategy, value):
    """The per-replica components of ``value`` on this worker, as a tuple."""
    return tuple(strategy.experimental_local_results(value))


def replica_index(replica_context):
    """This replica's position in ``local_results`` -- among this worker's
    replicas -- as a Python int.

    MirroredStrategy hands out the id as a constant tensor on TF2 and as an
    int on TF1; both are static. From TF 2.4 ``replica_id_in_sync_group``
    counts the replicas of every worker (MultiWorkerMirroredStrategy: the
    second worker's first replica is ``replicas per worker``), and the
    context keeps the local id beside it (``_local_replica_id``); before,
    the id is the local one.
    """
    rid = getattr(replica_context, "_local_replica_id", None)
    if rid is None:
        rid = replica_context.replica_id_in_sync_group
    return _static_replica_id(rid, replica_context)


def replica_id_in_cluster(replica_context):
    """This replica's number among the replicas of every worker, 0 to
    ``num_replicas_in_sync - 1``: which share of a global batch is its own.

    ``MultiWorkerMirroredStrategy`` numbers ``replica_id_in_sync_group``
    per worker before TF 2.4 (every worker's first replica is 0: measured
    on 2.0.4 and 2.1.4, where two workers both took the first half of each
    global batch; 2.4.4 numbers them across workers, through the
    ``_get_replica_id_in_sync_group`` its collective strategy gained).
    There, this worker's offset -- its task id times its replica count --
    is added.
    # TODO: remove the offset when TF 2.4 is the oldest supported release.
    """
    rid = _static_replica_id(replica_context.replica_id_in_sync_group, replica_context)
    extended = replica_context.strategy.extended
    workers = getattr(extended, "_num_workers", 1) or 1
    if workers > 1 and not hasattr(extended, "_get_replica_id_in_sync_group"):
        per_worker = replica_context.num_replicas_in_sync // workers
        rid += int(extended._task_id) * per_worker
    return rid


def _static_replica_id(rid, replica_context):
    if not isinstance(rid, int):
        rid = tf.get_static_value(rid)
    if rid is None:
        raise NotImplementedError(
            "gradacc_compat needs a static replica id; this strategy (%r) gives "
            "a dynamic one." % (replica_context.strategy,))
    return int(rid)


def shard_by_data(options):
    """Sets ``options`` (``tf.data.Options``) to shard a distributed dataset
    by element: each worker keeps every n-th element of the batched dataset
    (with ``batch`` last, every n-th global batch's share), never by file.
    ``auto_shard_policy = AutoShardPolicy.DATA`` from TF 2.1; TF 2.0 has
    only the boolean ``auto_shard`` (on by default), which shards by data
    where the dataset reads no files (as ``from_tensor_slices``).
    # TODO: remove the TF 2.0 branch when TF 2.1 is the oldest supported.
    """
    policy = getattr(tf.data.experimental, "AutoShardPolicy", None)
    if policy is not None:
        options.experimental_distribute.auto_shard_policy = policy.DATA
    else:
        options.experimental_distribute.auto_shard = True
    return options


@contextlib.contextmanager
def nullcontext():
    """``contextlib.nullcontext`` (Python >= 3.7 only)."""
    yield


@contextlib.contextmanager
def strategy_scope(strategy):
    """Enter ``strategy.scope()`` unless it is already the current strategy."""
    if tf.distribute.has_strategy() and tf.distribute.get_strategy() is strategy:
        yield
        return
    if not tf.distribute.has_strategy() and strategy is tf.distribute.get_strategy():
        yield  # the default strategy: nothing to enter
        return
    with strategy.scope():
        yield


def visible_devices():
    """Names of the devices TF can place ops on (logical devices)."""
    try:
        return [d.name for d in tf.config.experimental.list_logical_devices()]
    except AttributeError:  # 1.14 graph: no tf.config.experimental listing
        from tensorflow.python.client import device_lib
        return [d.name for d in device_lib.list_local_devices()]


def split_cpu(count):
    """Make ``count`` logical CPU devices (TF2 only; before any op runs).

    TF1 needs ``tf1_session_config(count)`` instead, given to the Session or to
    ``enable_eager_execution(config=...)``.  Do not pass a config to
    enable_eager_execution on TF2 (it errors on 2.0 and hangs on 2.15+).
    """
    if TF1:
        raise RuntimeError("split_cpu is for TF2; on TF %s use "
                           "tf1_session_config(%d)" % (TF_VERSION_STRING, count))
    cpus = tf.config.experimental.list_physical_devices("CPU")
    configs = [tf.config.experimental.VirtualDeviceConfiguration()
               for _ in range(count)]
    # set_virtual_device_configuration exists on every 2.x; the non-
    # experimental set_logical_device_configuration only from 2.1.
    tf.config.experimental.set_virtual_device_configuration(cpus[0], configs)


def tf1_session_config(cpu_count=1):
    return tf.compat.v1.ConfigProto(device_count={"CPU": cpu_count},
                                    allow_soft_placement=True)


def mirrored_strategy(devices, cross_device_ops=None):
    """A MirroredStrategy over ``devices`` for the running mode.

    TF 1.x graph and eager code uses ``tf.contrib.distribute.MirroredStrategy``
    (what estimator-era code has); TF2 uses ``tf.distribute.MirroredStrategy``.
    """
    if TF1 and HAS_CONTRIB_DISTRIBUTE:
        from tensorflow.contrib import distribute as contrib_distribute
        return contrib_distribute.MirroredStrategy(devices=devices,
                                                   cross_device_ops=cross_device_ops)
    return tf.distribute.MirroredStrategy(devices=devices,
                                          cross_device_ops=cross_device_ops)


def multi_worker_mirrored_strategy(communication=None):
    """``MultiWorkerMirroredStrategy``: ``tf.distribute`` from 2.4, under
    ``tf.distribute.experimental`` 1.14 -> 2.3 (and still there on TF1)."""
    cls = getattr(tf.distribute, "MultiWorkerMirroredStrategy", None) if not TF1 else None
    if cls is None:
        cls = tf.distribute.experimental.MultiWorkerMirroredStrategy
    if communication is None:
        return cls()
    return cls(communication=communication)


def collectives_in_tf1_graph(strategy):
    """Whether ``strategy`` all-reduces across worker processes with TF 1.x
    collective ops in a graph (``tf.contrib.distribute.CollectiveAllReduceStrategy``,
    1.x ``MultiWorkerMirroredStrategy``, more than one worker). There, a
    session run that may all-reduce or not -- the all-reduce in a
    ``tf.cond`` -- fails now and then in TF's collectives (measured with two
    workers on 127.0.0.1: 1.14 2 of 10 runs, 1.15 4 of 12 and 2 of 25,
    "Delete called on non-empty BufRendezvous"), while a run that always
    all-reduces does not (1.14 30 of 30, 1.15 40 of 40)."""
    if not TF1 or tf.executing_eagerly() or strategy is None:
        return False
    extended = strategy.extended
    return (type(extended).__name__ == "CollectiveAllReduceExtended"
            and (getattr(extended, "_num_workers", 1) or 1) > 1)


def cross_device_ops(strategy):
    """The object a strategy's gradient all-reduces go through (TF
    internals: ``extended._cross_device_ops``, or the collective ops of
    MultiWorkerMirroredStrategy, ``extended._collective_ops`` on some
    releases). For counting reductions only."""
    extended = strategy.extended
    for name in ("_cross_device_ops", "_collective_ops"):
        ops = getattr(extended, name, None)
        if ops is not None:
            return ops
    raise NotImplementedError("no cross-device ops found on %r" % (strategy,))


def keras_fit_per_replica_batch(strategy):
    """Whether Keras ``fit`` under ``strategy`` reads ``batch_size`` per replica.

    True for TF 1.x Keras with a ``tf.contrib.distribute`` strategy (whose
    distributed ``fit`` is then also not the single-device ``fit``: it feeds
    and reduces differently); ``tf.distribute`` strategies (TF2) read
    ``batch_size`` as the global batch.
    """
    # TODO: remove when TF 1.15 is no longer supported.
    return strategy is not None and not getattr(strategy.extended, "_global_batch_size", True)


def keras_fit_batch_size(strategy, global_batch):
    """The ``batch_size`` to give Keras ``fit`` for ``global_batch`` examples
    per step under ``strategy`` (``None``: no strategy)."""
    if not keras_fit_per_replica_batch(strategy):
        return global_batch
    replicas = strategy.num_replicas_in_sync
    if global_batch % replicas:
        raise ValueError("A global batch of %d does not split over %d replicas; this "
                         "Keras (TF %s) takes a per-replica batch_size under %s."
                         % (global_batch, replicas, TF_VERSION_STRING, type(strategy).__name__))
    return global_batch // replicas


def env_flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
