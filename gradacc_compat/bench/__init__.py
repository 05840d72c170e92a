"""What accumulation costs, against everything a user would do instead.

    python -m gradacc_compat.bench                 # the full run (minutes)
    python -m gradacc_compat.bench --quick         # a smoke run (seconds; CI runs it)
    python -m gradacc_compat.bench --json out.json --png out.png

On the installed TensorFlow (TF 1.x runs with eager execution enabled), in
ONE process, every candidate runs a short block in turn, many rounds over,
so that load on a shared machine hits all alike; reported are medians with
interquartile ranges, and ratios paired round by round. Sections:

- each workload (dense MLP, embedding with sparse gradients): plain
  stepping, the big batch, the floors, GradientAccumulator (tf.function,
  eager, XLA; and host-counted: ``accumulate`` in one function,
  ``apply_gradients`` every N from a second), the tutorial
  reduce-every-micro-step loop, Keras 3's own
  accumulation, and ``fit`` (plain, gac.wrap, Keras 3's, Horovod's);
  each accumulating candidate's weights are compared with the big batch's;
- targets: only what the speed targets compare (the accumulator against
  the floor of accumulation, the tutorial loop and Keras 3's own; fit with
  gac.wrap against Keras 3's fit; the host-counted accumulator shown
  beside them), timed until each comparison's 95%
  bootstrap interval of the median speed ratio is within +-``--resolution``
  (3 %) or ``--resolve-seconds`` have passed;
- eager overhead on a 100-variable model, gradients computed up front
  (resolved alike);
- MirroredStrategy over two logical CPUs: reductions and bytes per
  effective step (counted eagerly), time per effective step;
- memory: peaks of plain(b), accumulate(N, b) and plain(N*b), each in
  ``--memory-repeats`` fresh child processes (medians), and the same under
  one address-space cap.

Timings are reported, never asserted; ``--quick`` uses tiny sizes.
"""
from __future__ import absolute_import, division, print_function

import argparse

__all__ = ["main"]


def _parser():
    parser = argparse.ArgumentParser(prog="python -m gradacc_compat.bench",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8, help="N, micro-batches per update")
    parser.add_argument("--batch", type=int, default=32, help="b, examples per micro-batch")
    parser.add_argument("--rounds", type=int, default=15, help="alternating rounds")
    parser.add_argument("--cycles", type=int, default=2, help="effective steps per block")
    parser.add_argument("--resolution", type=float, default=0.03,
                        help="targets: time until each comparison's 95%% interval is within "
                             "+-this (a fraction)")
    parser.add_argument("--resolve-seconds", type=float, default=300,
                        help="targets: at most this long per section")
    parser.add_argument("--workloads", default="mlp,embedding",
                        help="comma-separated: mlp, embedding, deep, wide, tiny")
    parser.add_argument("--eager-workload", default="deep")
    parser.add_argument("--memory-workload", default="wide")
    parser.add_argument("--memory-batch", type=int, default=512)
    parser.add_argument("--memory-repeats", type=int, default=5,
                        help="fresh processes per memory configuration (medians reported)")
    parser.add_argument("--skip", default="",
                        help="comma-separated sections to skip: loops, targets, eager, "
                             "mirrored, memory")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--png", help="plot the results here (needs matplotlib)")
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, few rounds: a smoke run (timings meaningless)")
    parser.add_argument("--child-memory", help=argparse.SUPPRESS)
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.quick:
        args.steps, args.batch, args.rounds, args.cycles = 2, 4, 2, 1
        args.workloads = args.eager_workload = args.memory_workload = "tiny"
        args.memory_batch = 4
        args.memory_repeats = 2
        args.resolve_seconds = 0
    from gradacc_compat.bench import runner
    if args.child_memory:
        runner.setup_devices(1)
        return runner.memory_child(args)
    runner.setup_devices(2)
    return runner.run(args)
