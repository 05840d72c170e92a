"""One task of a parameter-server test (between-graph replication):
``python -m tests.workers.parameter_server OUT.npz`` with ``TF_CONFIG``.

A ps task serves until the launcher kills it. A worker builds the TF1
graph under ``replica_device_setter`` (variables on the ps), wraps a v1
Adam in ``gac.wrap(..., steps=N)``, trains on its own micro-batches in a
``MonitoredTrainingSession`` and saves the weights, ``global_step`` and the
devices of the accumulator's variables.
"""
from __future__ import absolute_import, division, print_function

import json
import os
import sys

import numpy as np

import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.compat import tf

from tests import harness as H

K, N, B = 2, 3, 4


def data(worker):
    return H.make_data(K * N * B, seed=7 + worker)


def main(out, placement="soft"):
    """``placement``: "soft" sets ``allow_soft_placement`` on the server and
    the session; "strict" leaves TF's default, as the README's example does."""
    soft = placement == "soft"
    if compat.eager_by_default():
        tf.compat.v1.disable_eager_execution()  # TF2: this is TF1 graph code
    config = json.loads(os.environ["TF_CONFIG"])
    task, index = config["task"]["type"], config["task"]["index"]
    spec = tf.train.ClusterSpec(config["cluster"])
    server = tf.distribute.Server(
        spec, job_name=task, task_index=index,
        config=tf.compat.v1.ConfigProto(allow_soft_placement=True) if soft else None)
    if task == "ps":
        server.join()
        return
    x, y = data(index)
    with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(
            worker_device="/job:worker/task:%d" % index, cluster=spec)):
        variables = H.make_variables(resource=True)
        global_step = tf.compat.v1.train.get_or_create_global_step()
        xb = tf.compat.v1.placeholder(tf.float32, [B, 4])
        yb = tf.compat.v1.placeholder(tf.float32, [B, 3])
        loss = H.global_mean_loss(variables, xb, yb, B)
        optimizer = gac.wrap(tf.compat.v1.train.AdamOptimizer(0.1), N)
        train_op = optimizer.minimize(loss, global_step=global_step, var_list=variables)
    devices = [v.device for v in optimizer.accumulator.variables]
    # Each worker talks to the ps and itself only: without the filter a
    # session waits for every task of the cluster, so a worker that starts
    # after the chief has finished and exited waits forever.
    config = tf.compat.v1.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % index],
                                      allow_soft_placement=soft)
    with tf.compat.v1.train.MonitoredTrainingSession(master=server.target, config=config,
                                                     is_chief=index == 0) as sess:
        for i in range(0, len(x), B):
            sess.run(train_op, {xb: x[i:i + B], yb: y[i:i + B]})
        weights = sess.run(variables)
        step = sess.run(global_step)
    np.savez(out, global_step=step, devices=np.array(devices), *weights)


if __name__ == "__main__":
    main(*sys.argv[1:])
