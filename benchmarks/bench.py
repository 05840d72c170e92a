"""What accumulation costs: time per micro-step, memory, and reductions.

    python benchmarks/bench.py [--steps 4] [--batch 64] [--width 512] [--repeat 10] [--rounds 5]
    python benchmarks/bench.py --quick      # seconds: a smoke run (the tests run it)

Compares, on the installed TensorFlow (eager + tf.function; TF 1.x runs with
eager enabled), a plain training step (gradient + apply on every micro-batch)
with the accumulating step (gradient + ``acc.step``), on one device and under
MirroredStrategy over two logical CPUs, and counts cross-replica reductions
per micro-step with a counting CrossDeviceOps. Timings are noisy on a shared
2-core machine: read ratios, not absolute numbers. The tests run ``--quick``
(tiny sizes, one round) for its output and reduction counts, never its times.
"""
from __future__ import absolute_import, division, print_function

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from gradacc_compat import compat  # noqa: E402
from gradacc_compat.compat import tf  # noqa: E402

if compat.TF1:
    tf.compat.v1.enable_eager_execution(config=compat.tf1_session_config(2))
else:
    compat.split_cpu(2)

import numpy as np  # noqa: E402

tf.get_logger().setLevel("ERROR")

import gradacc_compat as gac  # noqa: E402
from gradacc_compat.diagnostics import CountingReduction  # noqa: E402


def make_model(width, rng):
    shapes = [(width, width), (width,), (width, width), (width,), (width, 1), (1,)]
    return [tf.Variable(rng.normal(scale=0.05, size=s).astype("float32")) for s in shapes]


def loss_fn(variables, x, y, global_batch):
    h = x
    for i in range(0, len(variables) - 2, 2):
        h = tf.nn.relu(tf.matmul(h, variables[i]) + variables[i + 1])
    pred = tf.matmul(h, variables[-2]) + variables[-1]
    return tf.reduce_sum(tf.square(pred - y)) / float(global_batch)


def build(strategy, accumulate, args):
    """A warmed-up ``tf.function`` training step, and its extra memory."""
    rng = np.random.RandomState(0)
    with strategy.scope():
        variables = make_model(args.width, rng)
        opt = tf.compat.v1.train.MomentumOptimizer(0.01, 0.9)
        acc = gac.GradientAccumulator(steps=args.steps) if accumulate else None
    replicas = strategy.num_replicas_in_sync
    x = tf.constant(rng.normal(size=(args.batch, args.width)).astype("float32"))
    y = tf.constant(rng.normal(size=(args.batch, 1)).astype("float32"))

    def replica_step(xb, yb):
        ctx = tf.distribute.get_replica_context()
        if replicas > 1:
            xb = tf.split(xb, replicas)[compat.replica_index(ctx)]
            yb = tf.split(yb, replicas)[compat.replica_index(ctx)]
        with tf.GradientTape() as tape:
            loss = loss_fn(variables, xb, yb, args.batch)
        grads = tape.gradient(loss, variables)
        if acc is None:
            opt.apply_gradients(list(zip(grads, variables)))
        else:
            acc.step(opt, grads, variables)

    step = tf.function(lambda a, b: [compat.run_in_replicas(strategy, replica_step, (a, b)), None][1])
    for _ in range(args.steps * 2):   # warm-up: traces, slots, accumulators
        step(x, y)
    extra = sum(int(np.prod(v.shape)) * 4 for v in variables) if accumulate else 0
    return (lambda: step(x, y)), extra


def measure(strategy, args):
    """(plain, accumulating) seconds per micro-step: the best of ``--rounds``
    alternating blocks of ``--repeat`` cycles, so drift and other load on the
    machine hit both alike; and the accumulators' memory."""
    plain, _ = build(strategy, False, args)
    accumulating, extra = build(strategy, True, args)
    best = [float("inf"), float("inf")]
    for _ in range(args.rounds):
        for i, step in enumerate((plain, accumulating)):
            start = time.time()
            for _ in range(args.repeat * args.steps):
                step()
            best[i] = min(best[i], (time.time() - start) / (args.repeat * args.steps))
    return best[0], best[1], extra


def count_reductions(accumulate, args):
    """Eager (no tf.function): every Python-side reduction is counted."""
    counter = CountingReduction()
    strategy = compat.mirrored_strategy(["/cpu:0", "/cpu:1"], cross_device_ops=counter)
    rng = np.random.RandomState(0)
    with strategy.scope():
        variables = make_model(64, rng)
        opt = tf.compat.v1.train.MomentumOptimizer(0.01, 0.9)
        acc = gac.GradientAccumulator(steps=args.steps) if accumulate else None
    x = tf.constant(rng.normal(size=(8, 64)).astype("float32"))
    y = tf.constant(rng.normal(size=(8, 1)).astype("float32"))

    def replica_step():
        with tf.GradientTape() as tape:
            loss = loss_fn(variables, x, y, 16)
        grads = tape.gradient(loss, variables)
        if acc is None:
            opt.apply_gradients(list(zip(grads, variables)))
        else:
            acc.step(opt, grads, variables)

    for _ in range(args.steps):  # warm-up cycle: variables, slots, accumulators
        compat.run_in_replicas(strategy, replica_step)
    counter.calls = 0
    micro_steps = args.steps * 3
    for _ in range(micro_steps):
        compat.run_in_replicas(strategy, replica_step)
    return counter.calls / float(micro_steps)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, one round: a smoke run (timings meaningless)")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps, args.batch, args.width, args.repeat, args.rounds = 2, 8, 16, 1, 1
    print("TensorFlow %s, Python %s, steps=%d, micro-batch=%d, width=%d"
          % (compat.TF_VERSION_STRING, sys.version.split()[0], args.steps, args.batch, args.width))
    print("%-36s %14s %10s %14s" % ("run", "ms/micro-step", "vs plain", "extra memory"))
    for label, strategy in (("one device", tf.distribute.get_strategy()),
                            ("MirroredStrategy x2 CPUs",
                             compat.mirrored_strategy(["/cpu:0", "/cpu:1"]))):
        plain, accumulated, extra = measure(strategy, args)
        print("%-36s %14.2f %10s %14s" % (label + ", plain", plain * 1e3, "1.00", "-"))
        print("%-36s %14.2f %10.2f %11.1f MB" % (label + ", accumulate", accumulated * 1e3,
                                                 accumulated / plain, extra / 1e6))
    plain_r = count_reductions(False, args)
    acc_r = count_reductions(True, args)
    print("cross-replica reduction calls per micro-step: plain %.2f, accumulate %.2f "
          "(ratio %.3f; 1/steps = %.3f: the optimizer's reductions, once per effective step)"
          % (plain_r, acc_r, acc_r / plain_r, 1.0 / args.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
