"""``python -m gradacc_compat demo``: accumulation on a small model, watched.

Trains a small model on synthetic data with ``GradientAccumulator(steps=4)``
in this TF's default mode (eager, or a TF1 graph and session), with Keras'
progress bar showing the loss, the effective steps applied and the
micro-batches pending; then trains the same model on the big batches and
prints the largest weight difference. Exit status 1 if they differ.
"""
from __future__ import absolute_import, division, print_function

import numpy as np

from gradacc_compat import compat
from gradacc_compat.core.accumulator import GradientAccumulator
from gradacc_compat.core.batching import effective_batch_size
from gradacc_compat.compat import tf

STEPS, MICRO_BATCH, EFFECTIVE_STEPS = 4, 16, 25
TOLERANCE = 1e-5


def _train(make_optimizer, micro_batches, x, y, batch, on_step=None):
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


def _data():
    rng = np.random.RandomState(3)
    x = rng.normal(size=(EFFECTIVE_STEPS * STEPS * MICRO_BATCH, 8)).astype("float32")
    true_kernel = rng.normal(size=(8, 3)).astype("float32")
    y = np.tanh(x.dot(true_kernel)) + 0.05 * rng.normal(size=(len(x), 3)).astype("float32")
    return x, y.astype("float32")


def main():
    x, y = _data()
    make = lambda: tf.compat.v1.train.AdamOptimizer(0.05)  # noqa: E731 (every mode, every TF)
    micro_steps = len(x) // MICRO_BATCH
    print("gradacc_compat demo on TensorFlow %s (%s)" % (
        compat.TF_VERSION_STRING, "eager" if compat.eager_by_default() else "TF1 graph/session"))
    print("micro-batch %d x 1 replica x steps %d = effective batch %d; %d micro-steps, "
          "%d effective steps" % (MICRO_BATCH, STEPS, effective_batch_size(MICRO_BATCH, 1, STEPS),
                                   micro_steps, micro_steps // STEPS))
    bar = compat.progress_bar(micro_steps, stateful_metrics=["applied", "pending"])

    def on_step(n, loss, applied):
        values = [("loss", loss), ("applied", applied), ("pending", n - applied * STEPS)]
        if bar is not None:
            bar.update(n, values=values)
        elif n % STEPS == 0:  # no Keras: a line per effective step
            print("micro-step %d/%d  loss %.4f  applied %d" % (n, micro_steps, loss, applied))

    with tf.Graph().as_default() if not compat.eager_by_default() else compat.nullcontext():
        accumulated = _train(make, STEPS, x, y, batch=MICRO_BATCH, on_step=on_step)
    with tf.Graph().as_default() if not compat.eager_by_default() else compat.nullcontext():
        big = _train(make, 1, x, y, batch=STEPS * MICRO_BATCH)
    diff = max(float(np.max(np.abs(a - b))) for a, b in zip(accumulated, big))
    ok = diff <= TOLERANCE
    print("max |w_accumulated - w_big_batch| = %.2e over %d effective steps: %s"
          % (diff, micro_steps // STEPS, "OK (the big batch's weights)" if ok else "MISMATCH"))
    return 0 if ok else 1
