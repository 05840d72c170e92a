"""TF1 checkpoints across turning accumulation on and off.

A run that wraps its optimizer for the first time in an existing model_dir
(train, then raise the effective batch: what migrating users do) restores a
checkpoint that has no accumulator variables, and TF's Saver fails on every
missing key (``NotFoundError: Key gradient_accumulator/accum/... not found
in checkpoint``). The Saver here restores such a checkpoint without them
and starts a fresh cycle (the accumulator's variables initialized); a
checkpoint that has them -- written mid-cycle with accumulation -- restores
the pending cycle as before. The reverse, a checkpoint with accumulator
state restored by a run without accumulation, needs nothing: a Saver
ignores the checkpoint's extra keys.

The pending micro-batches of a session outlive it. A
``CheckpointSaverHook`` (Estimator's, MonitoredTrainingSession's) saves at
its end only if ``global_step`` moved since its last save, so the
micro-batches after the last apply of every ``Estimator.train()`` call
were lost, and epochs shorter than N never trained. The first time the
hook saves with this Saver, the Saver joins the hook's listeners (the list
Estimator's own ``saving_listeners`` join); at the hook's end it saves once
more, at the same step, when a cycle is pending that no save has seen.

``gac.wrap`` of a ``tf.compat.v1.train`` optimizer registers its accumulator
in the graph and, where the graph's ``SAVERS`` collection is empty, adds
this Saver there: ``Estimator`` and ``MonitoredTrainingSession`` (their
``Scaffold``) take the collection's Saver instead of making their own. A
Saver of your own (``Scaffold(saver=...)``, ``SAVERS``) is left alone.
"""
from __future__ import absolute_import, division, print_function

import inspect
import warnings

from gradacc_compat.core import audit
from gradacc_compat.compat import tf

__all__ = ["register", "AccumulatorSaver"]

#: The graph collection of the accumulators a Saver should know.
COLLECTION = "gradacc_compat_accumulators"
_SAVERS = tf.compat.v1.GraphKeys.SAVERS
_HOOK = tf.compat.v1.train.CheckpointSaverHook
_STEP_AHEAD = (
    "gradacc_compat: global_step moved %d times over %d effective steps (checkpoints "
    "%s): something "
    "besides the wrapper advances it on every run (a step counter of your own beside an "
    "optimizer that ignores global_step, as BERT's create_optimizer; the v1 "
    "DNNLinearCombined* estimators). Schedules keyed on global_step then count "
    "micro-steps. Advance it by the boolean the wrapper's apply_gradients returns, "
    "global_step.assign_add(tf.cast(applied, tf.int64)), or key schedules on "
    "global_step // steps (README: Estimator-era code).")
_STEP_AHEAD_SAID = set()


def register(accumulator):
    """Records ``accumulator`` in the current TF1 graph (nothing eagerly or
    inside a function) and makes :class:`AccumulatorSaver` the graph's
    Saver where it has none."""
    graph = tf.compat.v1.get_default_graph()
    if tf.executing_eagerly() or getattr(graph, "building_function", False):
        return
    if not any(a is accumulator for a in graph.get_collection(COLLECTION)):
        graph.add_to_collection(COLLECTION, accumulator)
    if not graph.get_collection(_SAVERS):
        # What Estimator makes itself when it finds no Saver.
        graph.add_to_collection(_SAVERS, AccumulatorSaver(
            sharded=True, max_to_keep=5, defer_build=True, save_relative_paths=True))


def _state(graph):
    return [v for acc in graph.get_collection(COLLECTION) for v in acc.variables]


def _key(variable):
    return variable.name.split(":")[0]


class AccumulatorSaver(tf.compat.v1.train.Saver):
    """A ``tf.compat.v1.train.Saver`` that restores a checkpoint without
    accumulator state into a graph with accumulators (a fresh cycle)."""

    _gac_fallback = None
    _gac_counts = ()

    def build(self):
        super(AccumulatorSaver, self).build()
        graph = tf.compat.v1.get_default_graph()
        state = _state(graph)
        if not state or self._gac_fallback is not None:
            return
        # Made now, before the session's graph is finalized.
        ids = set(id(v) for v in state)
        others = [v for v in tf.compat.v1.global_variables()
                  + graph.get_collection(tf.compat.v1.GraphKeys.SAVEABLE_OBJECTS)
                  if id(v) not in ids]
        self._gac_keys = set(_key(v) for v in state)
        self._gac_fallback = tf.compat.v1.train.Saver(
            var_list=others, sharded=True, save_relative_paths=True)
        self._gac_init = tf.compat.v1.variables_initializer(state)
        self._gac_counts = [acc.counts() for acc in graph.get_collection(COLLECTION)]

    def save(self, sess, save_path, *args, **kwargs):
        saved = super(AccumulatorSaver, self).save(sess, save_path, *args, **kwargs)
        hook = _saving_hook() if self._gac_counts else None
        if hook is not None:
            _join(hook, PendingCycleListener(self, save_path, self._gac_counts))
        return saved

    def restore(self, sess, save_path):
        if self._gac_fallback is not None and save_path is not None:
            keys = set(name for name, _ in tf.train.list_variables(save_path))
            if not self._gac_keys <= keys:  # written without accumulation
                self._gac_fallback.restore(sess, save_path)
                sess.run(self._gac_init)
                return None
        return super(AccumulatorSaver, self).restore(sess, save_path)


def _saving_hook():
    """The ``CheckpointSaverHook`` whose save is running (its ``_save``
    calls the Saver), or None: the Saver was called some other way."""
    frame = inspect.currentframe()
    try:
        for _ in range(4):
            frame = frame.f_back
            if frame is None:
                return None
            owner = frame.f_locals.get("self")
            if isinstance(owner, _HOOK):
                return owner
        return None
    finally:
        del frame


def _join(hook, listener):
    listeners = getattr(hook, "_listeners", None)
    if not isinstance(listeners, list):
        return
    if not any(isinstance(l, PendingCycleListener) and l.saver is listener.saver
               for l in listeners):
        listeners.append(listener)


class PendingCycleListener(tf.compat.v1.train.CheckpointSaverListener):
    """Saves a pending cycle at the hook's end that its last save did not
    see (the checkpoint of the same step, written again with it)."""

    def __init__(self, saver, save_path, counts):
        self.saver, self.save_path = saver, save_path
        self._counts = counts  # each accumulator's (micro_step, iterations)
        self._seen = self._first = None

    def _counters(self, session):
        return tuple(tuple(c) for c in session.run(self._counts))

    def after_save(self, session, global_step_value):
        self._seen = (global_step_value, self._counters(session))
        self._check_step(global_step_value, self._seen[1])

    def _check_step(self, step, counters):
        """Warns where ``global_step`` moves more often than cycles apply:
        something else advances it every run (BERT's ``create_optimizer``
        beside an optimizer that ignores it; v1 DNNLinearCombined*)."""
        cycles = max(iterations for _, iterations in counters) if counters else 0
        if self._first is None:
            self._first = (step, cycles)
            return
        moves, cycles = step - self._first[0], cycles - self._first[1]
        if cycles >= 1 and moves > cycles and self.save_path not in _STEP_AHEAD_SAID:
            _STEP_AHEAD_SAID.add(self.save_path)  # once per checkpoint path and process
            warnings.warn(_STEP_AHEAD % (moves, cycles, self.save_path),
                          audit.AccumulationWarning, stacklevel=2)

    def end(self, session, global_step_value):
        counters = self._counters(session)
        self._check_step(global_step_value, counters)
        pending = any(micro for micro, _ in counters)
        if pending and self._seen != (global_step_value, counters):
            self.saver.save(session, self.save_path, global_step=global_step_value,
                            write_meta_graph=False)
            self._seen = (global_step_value, counters)
