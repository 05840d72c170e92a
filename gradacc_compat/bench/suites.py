"""Which candidates each section of the benchmark compares: the custom
loops, the speed targets, the eager per-micro-step cost and Keras ``fit``
(the candidates themselves are in ``candidates``)."""
from __future__ import absolute_import, division, print_function

import numpy as np

import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.bench import candidates as C
from gradacc_compat.compat import tf

__all__ = ["loop_candidates", "target_candidates", "eager_candidates", "fit_candidates"]


def _keras_own_loop(s):
    keras = compat.keras_module()
    model = s.workload.build()
    opt = keras.optimizers.Adam(1e-3, gradient_accumulation_steps=s.steps)
    c = C.Candidate("keras3 own loop", "Keras 3 Adam(gradient_accumulation_steps=N) in a "
                  "tf.function loop", model, opt, exact=True)
    return C.each_micro_batch(s, c, C.apply_step(s, model, opt))


def loop_candidates(s, eager=True, xla=True):
    """The custom-loop candidates this TF and setting can run."""
    makers = [C.plain, C.big, C.floor, C.floor_write, C.accumulator, C.accumulator_host_counted,
              C.tutorial]
    if eager:
        makers.append(lambda s_: C.accumulator(s_, eager=True))
    if xla and compat.xla_function_kwargs() and not s.workload.sparse and s.strategy is None:
        # (XLA needs static shapes: the sparse apply's touched rows are not.)
        # Its reference is the big batch compiled alike (XLA orders sums its
        # own way; Adam turns round-off in near-zero gradients into steps).
        makers += [lambda s_: C.big(s_, xla=True), lambda s_: C.accumulator(s_, xla=True)]
    if compat.keras_own_accumulation() and s.strategy is None:
        makers.append(_keras_own_loop)
    return [make(s) for make in makers]


def target_candidates(s):
    """What the speed targets compare: the accumulator in tf.function against
    the floor of accumulation, the tutorial loop and Keras 3's own loop;
    fit with gac.wrap against Keras 3's and Horovod's own accumulation."""
    found = [C.floor_write(s), C.accumulator(s), C.accumulator_host_counted(s), C.tutorial(s)]
    if compat.keras_own_accumulation():
        found.append(_keras_own_loop(s))
    fits = [c for c in fit_candidates(s) if c.name != "fit big(N*b)"]
    if len(fits) > 2:  # something to compare fit gac.wrap with
        found += [c for c in fits if c.name != "fit plain(b)"]
    return found


# ----------------------------------------------------------------- eager
class _Weights(object):
    """Variables holding ``values``, shaped like a model for ``Candidate``."""

    def __init__(self, values):
        self.trainable_variables = [tf.Variable(v) for v in values]

    def get_weights(self):
        return [v.numpy() for v in self.trainable_variables]


def eager_candidates(s):
    """Eager per-micro-step cost with the gradients computed once up front
    (what is left is the accumulation's own work): the optimizer's eager
    apply on every micro-batch, the hand-written eager loop of writes into
    buffers with the mean applied every N, and ``acc.step`` eagerly."""
    initial = s.workload.build()
    grads = [tf.convert_to_tensor(g) for g in s.gradients(initial, s.xs[0], s.ys[0])]
    # Plain tf.Variables with the model's weights: v1 optimizers take no
    # Keras 3 variables.
    models = [_Weights(initial.get_weights()) for _ in range(3)]
    found = []

    opt = s.optimizer()
    c = C.Candidate("eager apply", "the optimizer's eager apply_gradients on every micro-batch",
                  models[0], opt)
    pairs = list(zip(grads, models[0].trainable_variables))
    c.cycle = lambda: [opt.apply_gradients(pairs) for _ in range(s.steps)]
    found.append(c)

    opt2 = s.optimizer()
    buffers = C.make_buffers(s, models[1])
    c = C.Candidate("eager floor+write", "hand-written eager loop: assign/assign_add into "
                  "buffers, host-counted, buffer/N applied every N", models[1], opt2)
    variables = models[1].trainable_variables

    def floor_cycle():
        for k in range(s.steps):
            for b, g in zip(buffers, grads):
                C.write(b, g, k == 0)
        opt2.apply_gradients([(b / float(s.steps), v) for b, v in zip(buffers, variables)])
    c.cycle = floor_cycle
    found.append(c)

    opt3 = s.optimizer()
    acc = gac.GradientAccumulator(s.steps)
    c = C.Candidate("gac eager", "acc.step eagerly", models[2], opt3)
    variables3 = models[2].trainable_variables
    c.cycle = lambda: [acc.step(opt3, grads, variables3) for _ in range(s.steps)]
    found.append(c)
    return found


# ------------------------------------------------------------------- fit
def _fit_candidate(s, name, what, optimizer, exact, big=False):
    """``model.fit`` over the micro-batches (or, ``big``, over their
    concatenation): ``block(k)`` is one fit call of k effective steps."""
    model = s.workload.build()
    kwargs = {"jit_compile": False} if compat.KERAS_FLAVOUR == "keras3" else {}
    model.compile(optimizer=optimizer, loss=_keras_loss(), **kwargs)
    x = np.concatenate([np.asarray(t) for t in s.xs])
    y = np.concatenate([np.asarray(t) for t in s.ys])
    per_step = s.batch * s.steps if big else s.batch
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(per_step).repeat()
    c = C.Candidate(name, what, model, optimizer, exact=exact)
    c.block = lambda cycles: model.fit(data, epochs=1, verbose=0,
                                       steps_per_epoch=cycles * (1 if big else s.steps))
    c.cycle = lambda: c.block(1)
    return c


def _keras_loss():
    keras = compat.keras_module()
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def fit_candidates(s):
    """``model.fit`` candidates: plain, gac.wrap, Keras 3's own accumulation,
    Horovod's backward_passes_per_step (where Horovod imports)."""
    keras = compat.keras_module()
    adam = keras.optimizers.Adam
    found = [
        _fit_candidate(s, "fit plain(b)", "model.fit, an update per micro-batch", adam(1e-3),
                       False),
        _fit_candidate(s, "fit big(N*b)", "model.fit on batches of N*b (the fit reference)",
                       adam(1e-3), False, big=True),
        _fit_candidate(s, "fit gac.wrap", "model.fit with gac.wrap(Adam, N)",
                       gac.wrap(adam(1e-3), s.steps), True),
    ]
    if compat.keras_own_accumulation():
        found.append(_fit_candidate(
            s, "fit keras3 own", "model.fit with Adam(gradient_accumulation_steps=N)",
            adam(1e-3, gradient_accumulation_steps=s.steps), True))
    horovod = _horovod_keras()
    if horovod is not None:
        found.append(_fit_candidate(
            s, "fit horovod bpps", "model.fit with hvd.DistributedOptimizer(Adam, "
            "backward_passes_per_step=N, average_aggregated_gradients=True, "
            "sparse_as_dense=True)",
            # Horovod accumulates no IndexedSlices with backward_passes_per_step > 1
            # unless it makes them dense.
            horovod.DistributedOptimizer(adam(1e-3), backward_passes_per_step=s.steps,
                                         average_aggregated_gradients=True,
                                         sparse_as_dense=True), True))
    return found


def _horovod_keras():
    try:
        import horovod.tensorflow.keras as hvd
    except ImportError:
        return None
    hvd.init()
    return hvd
