"""Where an MLP-shaped micro-step of ``acc.step`` spends its time beyond
the floor's bare ``assign_add``s: the tf.function's inputs.

A function holding the apply holds the optimizer's state among its captured
inputs (Adam: two slots a variable, its step and its learning rate), and
every call passes each of them. Gradients are fixed tensors, so what is
timed is the accumulation and the call, not a forward/backward.

Run from outside the checkout: PYTHONPATH=/path/to/checkout python THIS
(ROUNDS=40 by default; one block is 100 calls of each, alternating).
"""
from __future__ import absolute_import, division, print_function

import os
import time

import numpy as np
import tensorflow as tf

import gradacc_compat as gac

SHAPES = [[784, 64], [64], [64, 64], [64], [64, 10], [10]]
N = 1 << 30  # never applies: every call is a micro-step
GRADS = [tf.ones(s) for s in SHAPES]


def variables():
    return [tf.Variable(tf.zeros(s)) for s in SHAPES]


def bare():
    buffers = variables()

    @tf.function
    def f(grads):
        for b, g in zip(buffers, grads):
            b.assign_add(g)
    return f


def bare_with_inputs(extra):
    """``bare`` plus ``extra`` more captured variables, touched only by a
    branch that never runs (as an untaken apply touches the optimizer's)."""
    buffers, more = variables(), [tf.Variable(tf.zeros([3])) for _ in range(extra)]
    count = tf.Variable(0, tf.int64)

    @tf.function
    def f(grads):
        for b, g in zip(buffers, grads):
            b.assign_add(g)
        c = count.assign_add(1)

        def touch():
            return tf.group([m.assign_add(tf.ones([3])) for m in more])
        return tf.cond(c < 0, lambda: tf.group(touch()), tf.no_op)
    return f


def accumulator(host_counted):
    model, opt = variables(), tf.keras.optimizers.Adam(1e-3)
    acc = gac.GradientAccumulator(N)

    @tf.function
    def f(grads):
        if host_counted:
            return acc.accumulate(grads, model)
        return acc.step(opt, grads, model)
    return f


def main():
    rounds = int(os.environ.get("ROUNDS", "40"))
    fs = [("bare assign_adds (the floor's micro-step)", bare()),
          ("+ count and an untaken cond over 2 variables", bare_with_inputs(2)),
          ("+ count and an untaken cond over 16 variables", bare_with_inputs(16)),
          ("acc.accumulate (host-counted)", accumulator(True)),
          ("acc.step (Adam's 14 state variables among its inputs)", accumulator(False))]
    for _, f in fs:
        f(GRADS)
        f(GRADS)
    times = dict((name, []) for name, _ in fs)
    for _ in range(rounds):
        for name, f in fs:
            start = time.perf_counter()
            for _ in range(100):
                f(GRADS)
            times[name].append((time.perf_counter() - start) * 1e4)  # us per call
    base = np.asarray(times[fs[0][0]])
    print("TF %s, %d rounds; us per call, median [IQR]; extra over the first, paired" % (
        tf.__version__, rounds))
    for name, _ in fs:
        t = np.asarray(times[name])
        print("%-56s %6.1f [%6.1f-%6.1f]  +%5.1f [%5.1f-%5.1f]" % (
            (name, np.median(t)) + tuple(np.percentile(t, [25, 75]))
            + (np.median(t - base),) + tuple(np.percentile(t - base, [25, 75]))))


if __name__ == "__main__":
    main()
