"""One Horovod rank (``horovodrun -np 2 ... python -m tests.workers.horovod_worker
OUT%s.npz``, ``%s`` becomes ``<mode>-<rank>``).

Every mode trains the harness's Dense model on this rank's share of every
global micro-batch with a Horovod ``DistributedOptimizer`` (SGD with
momentum), ``N`` micro-batches per effective step, and saves the weights,
the effective steps and how many times Horovod's gradient all-reduce ran
(a variable counts them, so a call inside a ``tf.function`` counts each run):

- ``fit``: ``gac.wrap(hvd.DistributedOptimizer(keras SGD), N)`` + ``fit``;
- ``keras-loop``: ``acc.step(hvd.DistributedOptimizer(keras SGD), ...)``
  in a ``tf.function``, gradients from a plain ``tf.GradientTape``;
- ``keras-loop-eager``: the same, eagerly;
- ``v1-wrap``: ``gac.wrap(hvd.DistributedOptimizer(v1 Momentum), N).minimize``;
- ``v1-loop``: ``acc.step(hvd.DistributedOptimizer(v1 Momentum), ...)`` in a
  ``tf.function``.
"""
from __future__ import absolute_import, division, print_function

import sys

import numpy as np

import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.compat import tf

from tests import harness as H

K, N, B = 2, 3, 4   # effective steps, micro-batches per step, global micro-batch
LR, MOMENTUM = 0.1, 0.9
MODES = ("fit", "keras-loop", "keras-loop-eager", "v1-wrap", "v1-loop")


def data():
    return H.make_data(K * N * B, seed=9)


def counted(optimizer):
    """Counts the runs of ``optimizer``'s all-reduce in a variable."""
    calls = tf.Variable(0, dtype=tf.int64, trainable=False)
    reduce = optimizer._allreduce_grads

    def counting(grads, variables, *args, **kwargs):
        with tf.control_dependencies([calls.assign_add(1)]):
            grads = [None if g is None else tf.identity(g) for g in grads]
        return reduce(grads, variables, *args, **kwargs)
    optimizer._allreduce_grads = counting
    return calls


def _mse(model, x, y):
    return tf.reduce_mean(tf.square(model(x) - y))


def train(mode, hvd, x, y):
    """Trains one mode on this rank's share; returns (model, optimizer, calls)."""
    model = H.keras_dense_model()
    variables = model.trainable_variables
    if mode.startswith("v1"):
        hvd_opt = hvd.DistributedOptimizer(tf.compat.v1.train.MomentumOptimizer(LR, MOMENTUM))
    else:
        hvd_opt = hvd.DistributedOptimizer(
            compat.keras_legacy_optimizers().SGD(LR, momentum=MOMENTUM))
    calls = counted(hvd_opt)
    batches = [(x[i:i + len(x) // (K * N)], y[i:i + len(x) // (K * N)])
               for i in range(0, len(x), len(x) // (K * N))]
    if mode == "fit":
        optimizer = gac.wrap(hvd_opt, N)
        model.compile(optimizer=optimizer, loss="mse")
        model.fit(x, y, batch_size=len(batches[0][0]), epochs=1, shuffle=False, verbose=0)
        return model, optimizer.iterations, calls
    if mode == "v1-wrap":
        optimizer = gac.wrap(hvd_opt, N)
        for bx, by in batches:
            optimizer.minimize(lambda: _mse(model, bx, by), var_list=variables)
        return model, optimizer._gac_get_accumulator().iterations, calls
    acc = gac.GradientAccumulator(steps=N)

    def micro_step(bx, by):
        with tf.GradientTape() as tape:
            loss = _mse(model, bx, by)
        acc.step(hvd_opt, tape.gradient(loss, variables), variables)
    if mode != "keras-loop-eager":
        micro_step = tf.function(micro_step)
    for bx, by in batches:
        micro_step(tf.constant(bx), tf.constant(by))
    return model, acc.iterations, calls


def main(out):
    import horovod.tensorflow.keras as hvd_keras
    import horovod.tensorflow as hvd_tf
    hvd_keras.init()
    rank, size = hvd_keras.rank(), hvd_keras.size()
    x, y = data()
    share = B // size
    mine = np.concatenate([np.arange(i + rank * share, i + (rank + 1) * share)
                           for i in range(0, len(x), B)])
    for mode in MODES:
        hvd = hvd_tf if mode.startswith("v1") else hvd_keras
        model, iterations, calls = train(mode, hvd, x[mine], y[mine])
        np.savez(out % ("%s-%d" % (mode, rank)), reductions=int(calls.numpy()),
                 iterations=int(iterations.numpy()), *model.get_weights())


if __name__ == "__main__":
    main(sys.argv[1])
