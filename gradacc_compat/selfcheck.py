"""``python -m gradacc_compat check``: exactness on the installed TensorFlow.

Trains a tiny model twice in the default execution mode of this TF (eager on
TF2 / TF1 with eager enabled, else a TF1 graph and session): 2 effective steps
of 3 accumulated micro-batches, and 2 steps on the concatenated batches.
Prints the largest difference in weights per optimizer; exits 1 on mismatch.
"""
from __future__ import absolute_import, division, print_function

import numpy as np

from gradacc_compat import compat, families
from gradacc_compat.accumulator import GradientAccumulator
from gradacc_compat.compat import tf

TOLERANCE = 1e-5
_STEPS, _MICRO, _BATCH = 2, 3, 4


def _optimizers():
    yield "tf.compat.v1.train.MomentumOptimizer", lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)
    keras = compat.keras_module()
    if keras is not None:
        yield "tf.keras.optimizers.Adam (%s)" % compat.KERAS_FLAVOUR, lambda: keras.optimizers.Adam(0.05)


def _train(make_optimizer, micro_batches, x, y, batch=None, on_step=None):
    """Weights after training; ``micro_batches`` per apply (1 = no accumulator).

    ``on_step(micro_step, loss, applied)``, when given, is called after every
    micro-step with its loss and the effective steps applied so far.
    """
    rng = np.random.RandomState(0)
    kernel = tf.compat.v1.Variable(rng.normal(size=(x.shape[1], y.shape[1])).astype("float32"),
                                   use_resource=True)
    bias = tf.compat.v1.Variable(np.zeros(y.shape[1], "float32"), use_resource=True)
    variables = [kernel, bias]
    optimizer = make_optimizer()
    acc = GradientAccumulator(steps=micro_batches) if micro_batches > 1 else None
    batch = batch or len(x) // (_STEPS * micro_batches)

    def step(xb, yb):
        loss = lambda: tf.reduce_mean(tf.square(tf.tanh(tf.matmul(xb, kernel) + bias) - yb))
        if tf.executing_eagerly():
            with tf.GradientTape() as tape:
                value = loss()
            grads = tape.gradient(value, variables)
        else:
            value = loss()
            grads = tf.gradients(value, variables)
        if acc is None:
            return optimizer.apply_gradients(list(zip(grads, variables))), value
        return acc.step(optimizer, grads, variables), value

    applied = (lambda: int(acc.iterations.numpy())) if acc is not None else None
    if compat.eager_by_default():
        for n, i in enumerate(range(0, len(x), batch)):
            _, value = step(tf.constant(x[i:i + batch]), tf.constant(y[i:i + batch]))
            if on_step is not None:
                on_step(n + 1, float(value), applied() if applied else n + 1)
        return [v.numpy() for v in variables]
    xb = tf.compat.v1.placeholder(tf.float32, [batch, x.shape[1]])
    yb = tf.compat.v1.placeholder(tf.float32, [batch, y.shape[1]])
    op, value = step(xb, yb)
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        for n, i in enumerate(range(0, len(x), batch)):
            _, loss = sess.run([op, value], {xb: x[i:i + batch], yb: y[i:i + batch]})
            if on_step is not None:
                on_step(n + 1, float(loss),
                        int(sess.run(acc.iterations)) if acc is not None else n + 1)
        return sess.run(variables)


def main():
    rng = np.random.RandomState(1)
    x = rng.normal(size=(_STEPS * _MICRO * _BATCH, 4)).astype("float32")
    y = rng.normal(size=(_STEPS * _MICRO * _BATCH, 2)).astype("float32")
    mode = "eager" if compat.eager_by_default() else "TF1 graph/session"
    print("\nself-check (%s): %d effective steps of %d micro-batches vs the big batch"
          % (mode, _STEPS, _MICRO))
    failed = False
    for label, make in _optimizers():
        if not compat.eager_by_default() and not families.adapter_for(make()).works_in_graph:
            print("  %-45s skipped: this family does not run in TF1 graphs" % label)
            continue
        with tf.Graph().as_default() if not compat.eager_by_default() else compat.nullcontext():
            big = _train(make, 1, x, y)
        with tf.Graph().as_default() if not compat.eager_by_default() else compat.nullcontext():
            accumulated = _train(make, _MICRO, x, y)
        diff = max(float(np.max(np.abs(a - b))) for a, b in zip(big, accumulated))
        ok = diff <= TOLERANCE
        failed = failed or not ok
        print("  %-45s max |difference| = %.2e  %s" % (label, diff, "OK" if ok else "MISMATCH"))
    print("self-check %s" % ("FAILED" if failed else "passed"))
    return 1 if failed else 0
