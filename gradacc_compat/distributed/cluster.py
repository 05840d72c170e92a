"""Multi-worker set-up for launch scripts: one call, every TensorFlow.

    cluster = gac.cluster.multi_worker()     # reads TF_CONFIG
    with cluster.strategy.scope():
        ...build the model, optimizer and GradientAccumulator...
    # TF2: train eagerly or in tf.function, as with MirroredStrategy.
    # TF 1.x graph: run the graph in tf.compat.v1.Session(cluster.target,
    #               config=cluster.session_config).

``multi_worker()`` returns the collective all-reduce strategy of the running
TensorFlow (``tf.distribute.MultiWorkerMirroredStrategy`` from 2.4, the
``experimental`` one before), and on TF 1.x graphs also configures it and
starts this task's ``tf.distribute.Server``, whose target the session needs.

Beside it: ``shard_by_data(options)`` (a ``tf.data.Options`` that shards by
element, on every TF), ``replica_id_in_cluster(replica_context)`` (this
replica's number across every worker) and ``keras_fit_batch_size(strategy,
global_batch)`` (what to give ``fit``, which reads a per-replica batch on
TF 1.x contrib strategies).
"""
from __future__ import absolute_import, division, print_function

import json
import os

from gradacc_compat import compat
from gradacc_compat.compat import tf
# What users call beside multi_worker(); their version branches live in compat.
from gradacc_compat.compat import keras_fit_batch_size, replica_id_in_cluster, shard_by_data

__all__ = ["Cluster", "multi_worker", "tf_config", "keras_fit_batch_size",
           "replica_id_in_cluster", "shard_by_data"]


class Cluster(object):
    """What a worker needs: ``strategy``; ``task_type``/``task_id``;
    ``num_workers``; on TF 1.x graphs ``server``, ``target`` (for the
    Session) and ``session_config``; elsewhere those are None / ""."""

    def __init__(self, strategy, task_type, task_id, num_workers, server=None,
                 session_config=None):
        self.strategy = strategy
        self.task_type, self.task_id, self.num_workers = task_type, task_id, num_workers
        self.server, self.session_config = server, session_config

    @property
    def target(self):
        return self.server.target if self.server is not None else ""

    @property
    def is_chief(self):
        return self.task_type in ("chief", "master") or (
            self.task_type == "worker" and self.task_id == 0)


def tf_config(workers, index, task_type="worker", ps=()):
    """The ``TF_CONFIG`` JSON for task ``index`` of ``workers`` (host:port list)."""
    cluster = {"worker": list(workers)}
    if ps:
        cluster["ps"] = list(ps)
    return json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}})


def multi_worker(communication=None):
    """The multi-worker collective strategy for this TF and ``TF_CONFIG``.

    Raises:
      ValueError: ``TF_CONFIG`` is missing or names no ``worker`` task.
    """
    config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    task = config.get("task", {})
    workers = config.get("cluster", {}).get("worker", [])
    if not workers or "type" not in task:
        raise ValueError(
            "multi_worker() reads the cluster from the TF_CONFIG environment variable, "
            "which is %r. Set it in every worker process, e.g. TF_CONFIG='%s'."
            % (os.environ.get("TF_CONFIG"), tf_config(["127.0.0.1:2222", "127.0.0.1:2223"], 0)))
    strategy = compat.multi_worker_mirrored_strategy(communication)
    task_type, task_id = task["type"], int(task.get("index", 0))
    if compat.eager_by_default():
        return Cluster(strategy, task_type, task_id, len(workers))
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    session_config = tf.compat.v1.ConfigProto(allow_soft_placement=True)
    strategy.configure(session_config=session_config, cluster_spec=resolver.cluster_spec(),
                       task_type=task_type, task_id=task_id)
    session_config = strategy.update_config_proto(session_config)
    # update_config_proto turns on the scoped allocator for CollectiveReduce;
    # with the apply inside a tf.cond its buffers race ("Delete called on
    # non-empty BufRendezvous", TF 1.15), so the rewrite stays off.
    rewrite = session_config.graph_options.rewrite_options
    rewrite.scoped_allocator_optimization = rewrite.OFF
    del rewrite.scoped_allocator_opts.enable_op[:]
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=task_type,
                                  task_index=task_id, config=session_config, protocol="grpc")
    return Cluster(strategy, task_type, task_id, len(workers), server, session_config)
