"""What every ``gac.wrap`` wrapper has (``steps``, ``micro_step``,
``accumulator``, the accumulator made on first use) and the messages the
families share."""
from __future__ import absolute_import, division, print_function

from gradacc_compat import compat
from gradacc_compat.core.accumulator import GradientAccumulator
from gradacc_compat.core.accumulator_state import once_per_strategy

__all__ = ["AccumulatingBase", "describe", "NO_BATCH_SIZE", "ACROSS_WORKERS", "SYNC_REPLICAS"]


def describe(optimizer):
    """The optimizer as errors name it: class, TF, Keras flavour."""
    return "%s.%s (TF %s, tf.keras is %s)" % (
        type(optimizer).__module__, type(optimizer).__name__,
        compat.TF_VERSION_STRING, compat.KERAS_FLAVOUR)



class AccumulatingBase(object):
    """What every wrapper has: ``steps``, ``micro_step``, ``accumulator``.

    The GradientAccumulator is created on first use, in cross-replica context
    of the strategy that runs the step (wrappers are often created before
    ``strategy.scope()`` matters, or inside an estimator's model_fn), and
    tracked so checkpoints carry it.
    """

    def _gac_setup(self, steps, options):
        # object.__setattr__: keeps Keras' attribute tracking out of plain data.
        object.__setattr__(self, "_gac_steps", steps)
        object.__setattr__(self, "_gac_options", dict(options))
        object.__setattr__(self, "_gac_accumulator", None)

    @property
    def steps(self):
        return self._gac_steps

    @property
    def accumulator(self):
        return self._gac_get_accumulator()

    @property
    def micro_step(self):
        return self._gac_get_accumulator().micro_step

    def _gac_get_accumulator(self):
        if self._gac_accumulator is None:
            def create():
                acc = GradientAccumulator(self._gac_steps, compact_rows=False,
                                          **self._gac_options)
                # Tracked here, in cross-replica context: a checkpoint
                # restore waiting for it then assigns every replica's part.
                self._gac_attach(acc)
                return acc

            acc = once_per_strategy(create)
            if self._gac_accumulator is None:
                # Another replica's wrapper: an estimator's model_fn under
                # train_distribute builds one per replica; they share it.
                self._gac_attach(acc)
        return self._gac_accumulator

    def _gac_attach(self, acc):
        object.__setattr__(self, "_gac_accumulator", acc)
        self._track_trackable(acc, name="gradient_accumulator")


NO_BATCH_SIZE = (
    "Keras fit calls this wrapped optimizer, but the micro-batch it trains was not "
    "found (no train_step(self, data) on the stack): every micro-batch counts alike, "
    "so a short last batch of an epoch weighs as much as a full one, unlike in the big "
    "batch. Use batch sizes that divide the data, drop the remainder "
    "(dataset.batch(b, drop_remainder=True)), or keep train_step's `data` argument.")


ACROSS_WORKERS = (
    "Keras fit with a wrapped optimizer across workers: every micro-batch counts alike "
    "(weighting each by its examples would take one more all-reduce per effective "
    "step), so a short last batch of an epoch weighs as much as a full one, unlike in "
    "the big batch. Use batch sizes that divide the data, or drop the remainder "
    "(dataset.batch(b, drop_remainder=True)).")


SYNC_REPLICAS = (
    "%s. gac.wrap and SyncReplicasOptimizer do not compose: wrapped inside it, "
    "the wrapper advances global_step once per effective step, but SyncReplicasOptimizer "
    "drops as stale every gradient tagged with an older global_step, so its workers "
    "hang; wrapping it, the wrapper would run its token queue only on effective steps. "
    "(SyncReplicasOptimizer alone with replicas_to_aggregate = workers x steps is not "
    "exact either: it drops micro-batches as stale.) With parameter servers use "
    "gac.wrap(optimizer, steps) without it (each worker applies the mean of its own "
    "micro-batches); for synchronous workers, a collective strategy "
    "(tf.distribute.MultiWorkerMirroredStrategy) with gac.wrap or "
    "gac.GradientAccumulator.")
