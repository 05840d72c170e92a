"""One Horovod rank (``horovodrun -np 2 ... python -m tests.workers.horovod_worker
OUT%d.npz``, ``%d`` the rank):
``gac.wrap(hvd.DistributedOptimizer(SGD(momentum)), N)`` + ``fit`` on this
rank's share of every global micro-batch, eagerly (so every all-reduce that
runs is counted). Saves weights, all-reduces run, iterations."""
from __future__ import absolute_import, division, print_function

import sys

import numpy as np

import gradacc_compat as gac
from gradacc_compat import compat

from tests import harness as H

K, N, B = 2, 3, 4   # effective steps, micro-batches per step, global micro-batch


def data():
    return H.make_data(K * N * B, seed=9)


def main(out):
    import horovod.tensorflow.keras as hvd
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    x, y = data()
    share = B // size
    mine = np.concatenate([np.arange(i + rank * share, i + (rank + 1) * share)
                           for i in range(0, len(x), B)])
    model = H.keras_dense_model()
    inner = hvd.DistributedOptimizer(compat.keras_legacy_optimizers().SGD(0.1, momentum=0.9))
    optimizer = gac.wrap(inner, N)
    calls = [0]
    reduce = optimizer._gac_reduce  # Horovod's all-reduce, as the wrapper calls it

    def counted(grads, variables):
        calls[0] += 1
        return reduce(grads, variables)
    object.__setattr__(optimizer, "_gac_reduce", counted)
    model.compile(optimizer=optimizer, loss="mse", run_eagerly=True)
    model.fit(x[mine], y[mine], batch_size=share, epochs=1, shuffle=False, verbose=0)
    np.savez(out % rank, reductions=calls[0], iterations=int(optimizer.iterations.numpy()),
             *model.get_weights())


if __name__ == "__main__":
    main(sys.argv[1])
