"""One worker of a multi-worker test: ``python -m tests.workers.multi_worker
SCENARIO OUT.npz`` with ``TF_CONFIG`` set (see tests/multiprocess.py).

Scenarios: ``loop`` (GradientAccumulator in a custom loop: TF2 eager with
``acc.step``; a TF 1.x graph on the server's target with ``acc.accumulate``
every micro-step and ``acc.apply_gradients`` in a run of its own every N,
the split TF 1.x collectives need) and ``fit`` (gac.wrap + model.fit, TF2).
Every worker sees the same global micro-batches and trains on its share;
it saves its weights, its count of gradient all-reduces (eagerly the
strategy's reductions run; in a TF 1.x graph the session runs that executed
a CollectiveReduce op, read from each run's trace) and its effective steps.
"""
from __future__ import absolute_import, division, print_function

import os
import sys

import numpy as np

import gradacc_compat as gac
from gradacc_compat.distributed import cluster as gac_cluster
from gradacc_compat import compat
from gradacc_compat.distributed import diagnostics
from gradacc_compat.compat import tf

from tests import harness as H

K, N, B = 2, 3, 4   # effective steps, micro-batches per step, global micro-batch


def data():
    return H.make_data(K * N * B, seed=5)


def loop(out):
    worker = gac_cluster.multi_worker()
    strategy = worker.strategy
    x, y = data()
    graph = not compat.eager_by_default()
    with tf.Graph().as_default() if graph else compat.nullcontext():
        with strategy.scope():
            variables = H.make_variables(resource=True)
            optimizer = tf.compat.v1.train.AdamOptimizer(0.1)
            acc = gac.GradientAccumulator(steps=N)

        def share(batch):
            # TF 1.x graphs number replicas per worker (each worker's one
            # replica is replica 0): the worker's share is by its task id.
            if not graph:
                return H.replica_slice(batch)
            return tf.split(batch, worker.num_workers)[worker.task_id]

        def replica_fn(xb, yb):
            grads = H.gradients(lambda: H.global_mean_loss(
                variables, share(xb), share(yb), B), variables)
            if graph:  # TF 1.x collectives: the apply in a run of its own
                return acc.accumulate(grads, variables)
            return acc.step(optimizer, grads, variables)

        if graph:
            xb = tf.compat.v1.placeholder(tf.float32, [B, 4])
            yb = tf.compat.v1.placeholder(tf.float32, [B, 3])
            op = tf.group(*compat.local_results(
                strategy, compat.run_in_replicas(strategy, replica_fn, (xb, yb))))
            with strategy.scope():
                apply_op = acc.apply_gradients(optimizer)
            reductions = 0  # the session runs that all-reduced
            with tf.compat.v1.Session(worker.target, config=worker.session_config) as sess:
                sess.run([tf.compat.v1.global_variables_initializer(),
                          tf.compat.v1.local_variables_initializer()])
                task = worker.task_id
                for n, i in enumerate(range(0, len(x), B)):
                    reductions += _reduces(sess, task, op, {xb: x[i:i + B], yb: y[i:i + B]})
                    if (n + 1) % N == 0:
                        reductions += _reduces(sess, task, apply_op)
                weights = sess.run([compat.local_results(strategy, v)[0] for v in variables])
                iterations = sess.run(compat.local_results(strategy, acc.iterations)[0])
        else:
            with diagnostics.count_reductions(strategy) as counter:
                for i in range(0, len(x), B):
                    compat.run_in_replicas(strategy, replica_fn,
                                           (tf.constant(x[i:i + B]), tf.constant(y[i:i + B])))
            reductions = counter.calls
            weights = [v.numpy() for v in variables]
            iterations = acc.iterations.numpy()
    np.savez(out, reductions=reductions, iterations=iterations,
             *[np.asarray(w) for w in weights])


def _reduces(sess, task, fetch, feed=None):
    """Runs ``fetch`` traced; 1 when the run executed a CollectiveReduce op
    on this worker's own devices (``task:<task>``), else 0. (The trace may
    also hold the other worker's devices, whose collective of a concurrent
    run can show there: once in a CI run, worker 1 counted 3 for 2.)"""
    options = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
    metadata = tf.compat.v1.RunMetadata()
    sess.run(fetch, feed, options=options, run_metadata=metadata)
    own = "/task:%d/" % task
    return int(any("CollectiveReduce" in node.timeline_label or "CollectiveReduce" in
                   node.node_name for device in metadata.step_stats.dev_stats
                   if own in device.device + "/" for node in device.node_stats))


def fit(out, steps=N):
    worker = gac_cluster.multi_worker()
    strategy = worker.strategy
    x, y = data()
    with strategy.scope():
        model = H.keras_dense_model()
        optimizer = H.make_optimizer("keras", "adam")
        optimizer = gac.wrap(optimizer, steps) if steps > 1 else optimizer
        model.compile(optimizer=optimizer, loss="mse")
    options = compat.shard_by_data(tf.data.Options())
    # Every worker the same dataset, batched by the GLOBAL batch, sharded by
    # data: each worker then trains on its half of every global batch.
    batch = B if steps > 1 else N * B
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch).with_options(options)
    # Only reductions of the gradients' size: fit also reduces its metric
    # results and step counter every step.
    gradient_bytes = sum(int(np.prod(w.shape)) * 4 for w in model.get_weights())
    with diagnostics.count_reductions(strategy, min_bytes=gradient_bytes) as counter:
        # steps_per_epoch: TF 2.2 and 2.3 refuse a dataset sharded across
        # workers without it (every worker must run the same number of steps).
        model.fit(dataset, epochs=1, verbose=0, shuffle=False, steps_per_epoch=len(x) // batch)
    np.savez(out, reductions=counter.runs, iterations=int(H.keras_value(optimizer.iterations)),
             *model.get_weights())


if __name__ == "__main__":
    {"loop": loop, "fit": fit, "fit_plain": lambda out: fit(out, 1)}[sys.argv[1]](sys.argv[2])
    # The results are written: leave without TensorFlow's teardown, whose
    # collective threads now and then abort at exit ("terminate called
    # without an active exception", seen on TF 2.8 and 2.9 under load),
    # failing a run that finished.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
