"""Distribution adapters: running in replicas, replica ids, strategy
scopes and the strategy classes of each release."""
from __future__ import absolute_import, division, print_function

import contextlib

from gradacc_compat.compat.facts import HAS_CONTRIB_DISTRIBUTE, HAS_STRATEGY_RUN, TF1, tf

__all__ = [
    "get_strategy", "spans_workers", "in_cross_replica_context", "run_in_replicas",
    "REPLICA_RUNNER", "local_results", "replica_index", "replica_id_in_cluster",
    "shard_by_data", "strategy_scope", "mirrored_strategy", "multi_worker_mirrored_strategy",
    "collectives_in_tf1_graph", "cross_device_ops",
]




# ----------------------------------------------------------- distribution
def get_strategy():
    return tf.distribute.get_strategy()


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


def run_in_replicas(strategy, fn, args=()):
    """Run ``fn(*args)`` once per replica, in replica context.

    ``strategy.run`` (2.2+), ``experimental_run_v2`` (1.15-2.3), else
    ``extended.call_for_each_replica`` (the v1 API, present everywhere and the
    only one on 1.14 / tf.contrib strategies).
    """
    runner = REPLICA_RUNNER
    if runner == "extended.call_for_each_replica":
        return strategy.extended.call_for_each_replica(fn, args=args)
    return getattr(strategy, runner)(fn, args=args)


#: What ``run_in_replicas`` calls on this TF.
REPLICA_RUNNER = ("run" if HAS_STRATEGY_RUN else "experimental_run_v2"
                  if hasattr(tf.distribute.Strategy, "experimental_run_v2")
                  else "extended.call_for_each_replica")


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
