"""Execution adapters: eager or graph, ``tf.function`` traces, AutoGraph,
raw variable writers, and how a ``tf.cond`` runs."""
from __future__ import absolute_import, division, print_function

import contextlib

from gradacc_compat.compat.facts import TF1, TF_VERSION, tf

__all__ = [
    "executing_eagerly", "eager_by_default", "graph_entered", "xla_function_kwargs",
    "passed_as_arguments", "HAS_DO_NOT_CONVERT", "do_not_convert", "eager_assign",
    "eager_assign_add", "TRACE_KEEPS_INITIAL_VALUE", "direct_variables", "run_as_call",
    "nullcontext",
]




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
TRACE_KEEPS_INITIAL_VALUE = TF_VERSION < (1, 15, 0)


@contextlib.contextmanager
def direct_variables():
    """Creates this scope's variables as plain resource variables where
    TF 1.14 would keep their initial values twice: eagerly (under
    ``init_scope``), on one device. Elsewhere, and under a strategy (whose
    creator makes the per-replica components), it changes nothing."""
    if not (TRACE_KEEPS_INITIAL_VALUE and tf.executing_eagerly()
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


@contextlib.contextmanager
def nullcontext():
    """``contextlib.nullcontext`` (Python >= 3.7 only)."""
    yield
