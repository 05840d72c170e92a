"""The ways to train an effective batch of N micro-batches that the
benchmark compares, each as a :class:`Candidate` whose ``cycle()`` runs one
effective step (N micro-steps, or one big batch)."""
from __future__ import absolute_import, division, print_function

import numpy as np

import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.bench.workloads import loss_fn
from gradacc_compat.compat import tf

__all__ = ["Candidate", "Setting", "plain", "big", "floor", "floor_write", "accumulator",
           "accumulator_host_counted", "tutorial", "each_micro_batch", "apply_step",
           "make_buffers", "write", "FLOORS"]

#: The floors a candidate's cost is read against.
FLOORS = ("floor", "floor+write")


class Setting(object):
    """What every candidate of one run shares: the workload, N, b, the
    strategy (None: one device), and the data (N micro-batches)."""

    def __init__(self, workload, steps, batch, strategy=None, traced=True, v1_adam=False):
        self.workload = workload
        self.v1_adam = v1_adam  # tf.compat.v1.train.AdamOptimizer on every TF
        self.traced = traced  # False: no tf.function anywhere (to count eager reductions)
        self.steps = steps
        self.batch = batch
        self.strategy = strategy
        self.xs, self.ys = workload.micro_batches(steps, batch)
        self.big_x = tf.concat(self.xs, 0)
        self.big_y = tf.concat(self.ys, 0)

    @property
    def replicas(self):
        return 1 if self.strategy is None else self.strategy.num_replicas_in_sync

    def scope(self):
        return self.strategy.scope() if self.strategy is not None else compat.nullcontext()

    def optimizer(self):
        """Adam: Keras' where its optimizers run in loops under this TF's
        strategies (TF2), the v1 one on TF 1.x."""
        if compat.TF1 or self.v1_adam:
            return tf.compat.v1.train.AdamOptimizer(1e-3)
        return compat.keras_module().optimizers.Adam(1e-3)

    def run(self, fn, *args):
        """``fn(*args)`` in replica context (once per replica) when there is a
        strategy; a local micro-batch is the replica's share of the global one."""
        if self.strategy is None:
            return fn(*args)
        return compat.run_in_replicas(self.strategy, fn, args)

    def local(self, x):
        if self.strategy is None:
            return x
        ctx = tf.distribute.get_replica_context()
        return tf.split(x, self.replicas)[compat.replica_index(ctx)]

    def gradients(self, model, x, y):
        rows = int(x.shape[0])
        with tf.GradientTape() as tape:
            loss = loss_fn(model, self.local(x), self.local(y), rows)
        return tape.gradient(loss, model.trainable_variables)


class Candidate(object):
    """``cycle()`` runs one effective step, ``block(k)`` k of them (one
    ``fit`` call for the fit candidates); ``traces`` counts the Python
    bodies of its ``tf.function`` s that ran (each a trace)."""

    def __init__(self, name, what, model, optimizer, exact=False):
        self.name = name
        self.what = what
        self.model = model
        self.optimizer = optimizer
        self.cycle = None
        self.exact = exact      # accumulates: its weights must equal the big batch's
        self.traces = [0]

    def block(self, cycles):
        for _ in range(cycles):
            self.cycle()

    def weights(self):
        return [np.asarray(w) for w in self.model.get_weights()]


def _function(s, body, traces, xla=False):
    """``tf.function(body)`` that counts its traces in ``traces[0]`` (``body``
    itself when the setting runs untraced)."""
    if not s.traced:
        return body

    def counted(*args):
        traces[0] += 1
        out = body(*args)
        # A tensor is returned (the floor's: else its work is pruned); ops
        # and optimizer results are not (functions return tensors only).
        return out if isinstance(out, tf.Tensor) else None
    kwargs = compat.xla_function_kwargs() if xla else None
    return tf.function(counted, **(kwargs or {}))


def each_micro_batch(s, c, step, traced=True, xla=False):
    """``c.cycle``: ``step(x, y)`` in replica context on each micro-batch,
    traced once (a tf.function) unless ``traced`` is false."""
    def replicated(x, y):
        return s.run(step, x, y)
    fn = _function(s, replicated, c.traces, xla=xla) if traced else replicated

    def cycle():
        for x, y in zip(s.xs, s.ys):
            fn(x, y)
    c.cycle = cycle
    return c


def _build_state(s, model, opt):
    """Keras 3 builds its optimizer state on the first apply; inside a
    replica function of a tf.function that apply fails at run time, so
    under a strategy it is built here, in the strategy's scope."""
    if compat.KERAS_FLAVOUR == "keras3" and s.strategy is not None:
        with s.scope():
            opt.build(model.trainable_variables)


def apply_step(s, model, opt):
    _build_state(s, model, opt)

    def step(x, y):
        opt.apply_gradients(list(zip(s.gradients(model, x, y), model.trainable_variables)))
    return step


def plain(s):
    with s.scope():
        model, opt = s.workload.build(), s.optimizer()
    c = Candidate("plain(b)", "apply the optimizer on every micro-batch of b", model, opt)
    return each_micro_batch(s, c, apply_step(s, model, opt))


def big(s, xla=False):
    with s.scope():
        model, opt = s.workload.build(), s.optimizer()
    c = Candidate("big(N*b)" + (" XLA" if xla else ""), "one step on the concatenated N*b "
                  "batch (the reference%s)" % (", compiled by XLA" if xla else ""), model, opt)
    _build_state(s, model, opt)

    def step(x, y):
        # Rows repeated in the batch's IndexedSlices summed first, as
        # accumulation does: the mean gradient, whatever the optimizer does
        # with duplicates (Keras 3 Adam squares each duplicate apart).
        grads = [_sum_duplicates(g) for g in s.gradients(model, x, y)]
        opt.apply_gradients(list(zip(grads, model.trainable_variables)))

    fn = _function(s, lambda x, y: s.run(step, x, y), c.traces, xla=xla)
    c.cycle = lambda: fn(s.big_x, s.big_y)
    return c


def _sum_duplicates(grad):
    if not isinstance(grad, tf.IndexedSlices):
        return grad
    rows, positions = tf.unique(grad.indices)
    values = tf.math.unsorted_segment_sum(grad.values, positions, tf.shape(rows)[0])
    return tf.IndexedSlices(values, rows, grad.dense_shape)


def floor(s):
    with s.scope():
        model = s.workload.build()
    c = Candidate("floor", "forward/backward only; every gradient read once, nothing applied",
                  model, None)

    def step(x, y):
        grads = s.gradients(model, x, y)
        return tf.add_n([tf.reduce_sum(g.values if isinstance(g, tf.IndexedSlices) else g)
                         for g in grads])
    return each_micro_batch(s, c, step)


def make_buffers(s, model, **kwargs):
    with s.scope():
        return [tf.Variable(tf.zeros(v.shape, v.dtype), trainable=False, **kwargs)
                for v in model.trainable_variables]


def write(buffer, grad, first):
    if isinstance(grad, tf.IndexedSlices):
        if first:
            buffer.assign(tf.zeros_like(buffer))
        return buffer.scatter_add(grad)
    return buffer.assign(grad) if first else buffer.assign_add(grad)


def floor_write(s):
    """The floor of accumulation: forward/backward plus one write of each
    gradient into a preallocated buffer (assign on the first micro-batch,
    add after), counted on the host; the mean applied by another function."""
    with s.scope():
        model, opt = s.workload.build(), s.optimizer()
    buffers = make_buffers(s, model)
    c = Candidate("floor+write", "forward/backward + one write per gradient into a buffer; "
                  "host-counted; buffer/N applied by a second function", model, opt)

    def micro(first):
        def step(x, y):
            for b, g in zip(buffers, s.gradients(model, x, y)):
                write(b, g, first)
        return _function(s, lambda x, y: s.run(step, x, y), c.traces)

    first, rest = micro(True), micro(False)
    apply_fn = _function(s, lambda: s.run(lambda: opt.apply_gradients(
        [(b / float(s.steps), v) for b, v in zip(buffers, model.trainable_variables)])),
        c.traces)

    def cycle():
        first(s.xs[0], s.ys[0])
        for x, y in zip(s.xs[1:], s.ys[1:]):
            rest(x, y)
        apply_fn()
    c.cycle = cycle
    return c


def tutorial(s):
    """The pattern of many tutorials: accumulate into model-like variables
    (mirrored: every add is an all-reduce under a strategy), apply their
    mean every N micro-batches, then zero them."""
    with s.scope():
        model, opt = s.workload.build(), s.optimizer()
    buffers = make_buffers(s, model, synchronization=tf.VariableSynchronization.ON_WRITE,
                       aggregation=tf.VariableAggregation.SUM)
    c = Candidate("reduce-every-micro-step", "tutorial pattern: mirrored buffers += gradient "
                  "(an all-reduce per micro-step under a strategy), apply, zero",
                  model, opt, exact=True)

    def step(x, y):
        grads = s.gradients(model, x, y)
        for b, g in zip(buffers, grads):
            b.assign_add(tf.convert_to_tensor(g))

    _build_state(s, model, opt)

    def apply_step():
        # Every replica holds the same sum and the optimizer adds the
        # replicas' gradients: divide by both. (tf.function orders the
        # stateful ops as written.)
        scale = float(s.steps * s.replicas)
        opt.apply_gradients([(b / scale, v) for b, v in zip(buffers, model.trainable_variables)])
        for b in buffers:
            b.assign(tf.zeros_like(b))

    return _then_apply(s, each_micro_batch(s, c, step), lambda: s.run(apply_step))


def _then_apply(s, c, apply_step):
    """``c.cycle``: its micro-steps, then ``apply_step`` from a function of
    its own (the host counts)."""
    micro_steps = c.cycle
    apply_fn = _function(s, apply_step, c.traces)

    def cycle():
        micro_steps()
        apply_fn()
    c.cycle = cycle
    return c


def accumulator(s, eager=False, xla=False):
    with s.scope():
        model, opt = s.workload.build(), s.optimizer()
        acc = gac.GradientAccumulator(s.steps)
    name = "gac eager" if eager else ("gac XLA" if xla else "gac tf.function")
    c = Candidate(name, "GradientAccumulator.step " + (
        "eagerly" if eager else "in tf.function" + (" compiled by XLA" if xla else "")),
        model, opt, exact=True)

    def step(x, y):
        acc.step(opt, s.gradients(model, x, y), model.trainable_variables)
    return each_micro_batch(s, c, step, traced=not eager, xla=xla)


def accumulator_host_counted(s):
    """The accumulator used as the floor and the tutorial loop are: the
    host counts, ``acc.accumulate`` in one function, ``acc.apply_gradients``
    in a second one every N. Its micro-step function then holds no apply
    (and none of the optimizer's state among its inputs)."""
    with s.scope():
        model, opt = s.workload.build(), s.optimizer()
        acc = gac.GradientAccumulator(s.steps)
    c = Candidate("gac host-counted", "GradientAccumulator.accumulate in tf.function; "
                  "apply_gradients from a second function every N", model, opt, exact=True)
    _build_state(s, model, opt)
    each_micro_batch(s, c, lambda x, y: acc.accumulate(s.gradients(model, x, y),
                                                        model.trainable_variables))
    return _then_apply(s, c, lambda: acc.apply_gradients(opt))


