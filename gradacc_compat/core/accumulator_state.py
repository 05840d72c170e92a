"""The accumulator's plain (untracked) state, where its variables are placed,
and one accumulator shared by the replicas that each build one."""
from __future__ import absolute_import, division, print_function

from gradacc_compat import compat
from gradacc_compat.compat import tf

__all__ = ["PlainState", "Cycle", "task_placement", "Shared", "once_per_strategy", "SYNC",
           "AGG"]

SYNC = tf.VariableSynchronization
AGG = tf.VariableAggregation


class PlainState(object):
    """Python-side bookkeeping, kept out of TF's object tracking. One per
    accumulator, shared by every replica's object when each replica builds
    its own (see :func:`once_per_strategy`)."""

    def __init__(self, strategy, name):
        self.strategy = strategy
        self.name = name
        self.variables = None   # the model variables, in the order given
        self.seen = set()       # indices that received a gradient at least once
        self.ever_none = set()  # indices that some call passed None for
        self.present = None     # [variables] flags: got a gradient this cycle
        self.weighted = False   # some accumulate() call passed weight=
        self.dense = set()      # indices that received a dense gradient
        self.maximum = set()    # indices whose cycle value is the maximum
        self.locals = {}        # (list id, replica) -> that replica's components
        self.compact = {}       # index -> CompactRows (see compact_rows)
        self.slots = None       # the slot count of the compact rows
        self.device, self.collections = task_placement()

    def variable(self, name, shape, dtype, aggregation, fill=0):
        """A replica-local (``ON_READ``) variable named ``<accumulator>/<name>``
        (``init_scope`` drops the caller's name scope), filled with ``fill``:
        micro-steps touch only this replica's component, so they do no
        cross-replica communication."""
        with tf.device(self.device) if self.device else compat.nullcontext(), \
                compat.direct_variables():
            return tf.compat.v1.Variable(
                lambda: tf.fill(shape, tf.cast(fill, dtype)), name="%s/%s" % (self.name, name),
                trainable=False, use_resource=True, synchronization=SYNC.ON_READ,
                aggregation=aggregation, collections=self.collections)


def task_placement():
    """``(device, collections)`` for the accumulator's variables.

    In a TF1 graph whose ops this scope places on a cluster task (between-
    graph replication: ``replica_device_setter`` puts variables on ``ps``
    tasks and everything else on this worker), the accumulator is this
    worker's own state: pinned to the device ordinary ops get here (never a
    ps task, where the workers would mix their micro-batches and race on the
    counters) and a LOCAL variable, which each worker's session initializes
    itself. Elsewhere: no device of its own, the global collection.
    """
    graph = tf.compat.v1.get_default_graph()
    if tf.executing_eagerly() or getattr(graph, "building_function", False):
        return None, None
    with tf.init_scope():
        device = tf.no_op(name="gac_placement").device  # where this scope puts ops
    job = tf.DeviceSpec.from_string(device or "").job
    if not job or job == "localhost":
        return None, None
    return device, [tf.compat.v1.GraphKeys.LOCAL_VARIABLES]


class Shared(object):
    """An opaque holder: what a merge function hands back to every replica
    (``merge_call`` results are split per replica, and a bare replica-local
    variable would arrive as one replica's component on TF 1.14)."""

    def __init__(self, value):
        self.value = value


def once_per_strategy(create):
    """``create()``, run once even when every replica calls this.

    An estimator's ``model_fn`` under ``train_distribute`` (and any replica
    function that builds its optimizer) runs once per replica, so each
    replica builds its own wrapper and accumulator. MirroredStrategy's
    ``merge_call`` runs ONE replica's merge function, with every replica
    waiting: creating there, and handing the result back to each replica,
    gives them all the same state. Outside replica context it is a call.
    """
    ctx = tf.distribute.get_replica_context()
    if ctx is None or not tf.distribute.has_strategy():
        return create()
    return ctx.merge_call(lambda _strategy: Shared(create())).value


class Cycle(object):
    """What a micro-step's writes and an effective step's apply work on:
    the accumulator's settings, its plain state and its variables. The
    writes (``accumulator_writes``) and the apply (``accumulator_apply``)
    are functions of a cycle; :class:`GradientAccumulator` holds one and
    hands it to them.

    ``track(name, value)`` makes ``value`` part of the accumulator's
    checkpoint (its attribute ``_<name>``) and returns the tracked
    container, which the cycle keeps: the accumulators, row marks and
    compact rows are made on first use, and a restore that waits for them
    assigns their components when they are tracked.
    """

    def __init__(self, plain, steps, reduction, nonfinite, transform, counters, track):
        self.plain = plain
        self.steps = steps
        self.reduction = reduction
        self.nonfinite = nonfinite
        self.transform = transform
        self.micro_step, self.iterations, self.weight_total, self.skipped = counters
        self.track = track
        self.accums = None    # one replica-local sum per model variable
        self.present = None   # [variables] flags: got a gradient this cycle
        self.rows = None      # str(index) -> row marks of a sparse variable
        self.tracked_compact = None  # name -> a compact rows' variable

    @property
    def built(self):
        return self.accums is not None

    def adopt(self, accums):
        """The accumulators (and, empty, the containers made on first use)."""
        if self.accums is None:
            self.accums = self.track("accums", accums)
            self.present = self.track("present", self.plain.present)
            self.rows = self.track("rows", {})
            self.tracked_compact = self.track("compact", {})

    def adopt_rows(self, marks):
        for i, mark in sorted(marks.items()):
            if str(i) not in self.rows:
                self.rows[str(i)] = mark

    def local(self, variable):
        """This replica's component: read/written directly, which also avoids
        TF 1.14 mistaking a nested replica context for cross-replica."""
        parts = compat.local_results(self.plain.strategy, variable)
        if len(parts) == 1:
            return parts[0]
        return parts[compat.replica_index(tf.distribute.get_replica_context())]

    def local_list(self, variables):
        """``[self.local(v) for v in variables]``, computed once per replica."""
        ctx = tf.distribute.get_replica_context()
        key = (id(variables), None if ctx is None or compat.in_cross_replica_context()
               else compat.replica_index(ctx))
        cache = self.plain.locals
        if key not in cache or cache[key][0] is not variables:
            cache[key] = (variables, [self.local(v) for v in variables])
        return cache[key][1]

    def components(self, variable):
        """The components of ``variable`` this context may write."""
        if compat.in_cross_replica_context():
            return compat.local_results(self.plain.strategy, variable)
        return (self.local(variable),)

    def marks(self):
        """The row marks, in the model variables' order."""
        return [self.rows[k] for k in sorted(self.rows or {}, key=int)]

    def state_variables(self):
        """Every variable that holds a pending cycle, in a fixed order (see
        ``GradientAccumulator.state_variables``)."""
        plain = self.plain
        compact = [v for _, part in sorted(plain.compact.items()) for v in part.variables()]
        present = [self.present] if self.accums is not None else []
        skipped = [self.skipped] if self.skipped is not None else []
        return (list(self.accums or []) + [self.micro_step, self.iterations,
                                           self.weight_total] + skipped + present
                + self.marks() + ([plain.slots] if compact else []) + compact)

    def reset_ops(self, components):
        """Ends the cycle: its counters back to zero. The accumulators keep
        their sums until the next cycle's first micro-batch overwrites them."""
        counters = [self.weight_total, self.micro_step]
        if self.plain.compact:
            counters.append(self.plain.slots)
            counters.extend(part.spilled for _, part in sorted(self.plain.compact.items()))
        ops = []
        for v in counters:
            for part in components(v):
                ops.append(part.assign(tf.zeros_like(part)))
        return ops
