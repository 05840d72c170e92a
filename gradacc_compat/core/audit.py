"""What makes accumulation differ from the big batch, found in a model.

``batch_dependent_layers(model)`` names the layers whose output for one
example depends on the rest of its batch (batch statistics) or on random
draws: with them, N micro-batches of b cannot equal one batch of N*b, with
or without gradacc_compat. ``verify`` uses it to say what to do on FAIL;
the accumulator uses it (``first_use``) for a warning, once.
"""
from __future__ import absolute_import, division, print_function

import logging
import sys
import warnings

from gradacc_compat import compat
from gradacc_compat.compat import tf

__all__ = ["AccumulationWarning", "batch_dependent_layers", "explain", "first_use",
           "quiet_global_step_warnings", "warn_once"]

LOG = logging.getLogger("gradacc_compat")

#: Layer class names whose output depends on the other examples of the batch.
BATCH_STATISTICS = ("BatchNormalization", "BatchNormalizationV1", "BatchNormalizationV2",
                    "SyncBatchNormalization")
#: Layer class names that draw random numbers in training.
RANDOM = ("Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D",
          "GaussianDropout", "GaussianNoise", "AlphaDropout")


class AccumulationWarning(UserWarning):
    """A setup whose accumulated result differs from the big batch's."""


def _layers(model):
    """Every layer inside ``model`` (nested models included), once."""
    seen, stack, found = set(), [model], []
    while stack:
        layer = stack.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        found.append(layer)
        stack.extend(reversed(list(getattr(layer, "layers", None) or [])))
    return found[1:]


def batch_dependent_layers(model):
    """``[(layer name, class name, kind)]``, kind ``"batch statistics"`` or
    ``"random"``, for the layers of ``model`` (none for a non-Keras object)."""
    found = []
    for layer in _layers(model):
        cls = type(layer).__name__
        if cls in BATCH_STATISTICS:
            found.append((layer.name, cls, "batch statistics"))
        elif cls in RANDOM and getattr(layer, "rate", 1) != 0:
            found.append((layer.name, cls, "random"))
    return found


def explain(found):
    """Lines saying what each batch-dependent layer does and what to do."""
    lines = []
    for name, cls, kind in found:
        if kind == "batch statistics":
            lines.append(
                "layer %r (%s) normalizes with the mean and variance of each micro-batch, "
                "not of the effective batch: accumulation cannot equal the big batch. Use "
                "LayerNormalization or GroupNormalization, freeze it (trainable=False), or "
                "accept the difference." % (name, cls))
        else:
            lines.append(
                "layer %r (%s) draws random numbers: each run differs from the other. "
                "Verify without it (rate 0), then put it back." % (name, cls))
    return lines


#: How far up the stack first_use looks for the model and a loss-scale
#: optimizer (Keras fit: model.train_step -> optimizer -> wrapper -> here).
_FRAMES = 40


def _callers():
    frame = sys._getframe(2)
    for _ in range(_FRAMES):
        if frame is None:
            return
        yield frame
        frame = frame.f_back


def _is_model(value):
    return hasattr(type(value), "layers") and hasattr(value, "trainable_variables")


def _trainable_ids(model):
    found = set()
    try:
        found = set(id(v) for v in model.trainable_variables)
    except Exception:  # noqa: BLE001 - a half-built model: not ours to judge
        pass
    return found


@compat.do_not_convert
def first_use(owner, variables, steps, strategy):
    """Once per accumulator (``owner``: its shared state), when it first sees
    its variables: warn about what makes the result differ from the big batch.

    * a batch-statistics (or random) layer in the Keras model that owns
      ``variables``, found among the callers' locals (``self`` of
      ``train_step`` under ``fit``, ``model`` in a custom loop);
    * ``LossScaleOptimizer(gac.wrap(...))``: the loss scale then checks and
      adapts per micro-batch, and skips single micro-batches;
    * several replicas: each update averages ``steps`` micro-steps of every
      replica, which input pipelines batched per replica must count.
    """
    if getattr(owner, "_gac_audited", False):
        return
    owner._gac_audited = True
    ids = set(id(v) for v in variables)
    models, loss_scaled = {}, False
    for frame in _callers():
        for value in list(frame.f_locals.values()):
            if _is_model(value) and id(value) not in models and _trainable_ids(value) & ids:
                models[id(value)] = value
            elif "LossScaleOptimizer" in type(value).__name__ and \
                    hasattr(getattr(value, "inner_optimizer", None), "_gac_steps"):
                loss_scaled = True  # a gac.wrap wrapper inside a loss-scale optimizer
    for model in models.values():
        for line in explain(batch_dependent_layers(model)):
            warnings.warn("gradacc_compat: " + line, AccumulationWarning, stacklevel=2)
    if loss_scaled:
        warnings.warn(
            "gradacc_compat: a LossScaleOptimizer calls this accumulator: it checks for "
            "inf/NaN and adjusts the loss scale on every micro-batch and drops single "
            "micro-batches, so updates are not the big batch's. Wrap the other way: "
            "gac.wrap(LossScaleOptimizer(optimizer), steps=%d)." % steps,
            AccumulationWarning, stacklevel=2)
    replicas = getattr(strategy, "num_replicas_in_sync", 1)
    if replicas > 1:
        LOG.warning(
            "gradacc_compat: accumulating over %d replicas with steps=%d: each update "
            "averages %d replica micro-batches. The effective batch is per-replica batch "
            "x %d x %d; an input_fn that batches per replica (TF1 estimators) makes it %dx "
            "what steps suggests. gac.steps_for_effective_batch(target, per_replica_batch, "
            "replicas=%d) gives steps for a target.", replicas, steps, replicas * steps,
            replicas, steps, replicas, replicas)


def warn_once(owner, key, message):
    """``message`` as an :class:`AccumulationWarning`, once per ``owner``
    (an accumulator's shared state) and ``key``."""
    said = owner.__dict__.setdefault("_gac_warned", set())
    if key in said:
        return
    said.add(key)
    warnings.warn("gradacc_compat: " + message, AccumulationWarning, stacklevel=3)


#: Ops a loss passes through on its way from the head's reduction to
#: ``minimize``: regularization added, an identity.
_ADDS = ("Identity", "Add", "AddV2", "AddN")


def sum_reduced_loss(loss):
    """The name of the op that sums ``loss`` over its batch where ``loss``
    comes from ``tf.compat.v1.losses`` with ``Reduction.SUM`` (a v1 canned
    head's default ``loss_reduction``), regularization losses added or not;
    else None. TF1 graphs only (eagerly a loss is a value)."""
    if tf.executing_eagerly() or not hasattr(loss, "op"):
        return None
    ops = [loss.op]
    for _ in range(4):
        for op in ops:
            # compute_weighted_loss's SUM: reduce_sum(multiply(losses, weights))
            # in the loss function's scope (the mean-like reductions end in
            # a DivNoNan named "value").
            scope, _, last = op.name.rpartition("/")
            if (op.type == "Sum" and last == "Sum" and scope
                    and op.inputs[0].op.name == scope + "/Mul"):
                return op.name
        ops = [i.op for op in ops if op.type in _ADDS for i in op.inputs]
    return None


def warn_if_sum_reduced(owner, loss, reduction, steps):
    """Warns once per ``owner`` where ``loss`` is summed over the batch and
    the wrapper averages its micro-batches: each effective step would apply
    1/``steps`` of the big batch's gradient."""
    summed = sum_reduced_loss(loss) if reduction == "mean" else None
    if summed:
        warn_once(owner, "sum_reduced_loss", (
            "the loss given to minimize is summed over its batch (%s: tf.compat.v1.losses "
            "with Reduction.SUM, a v1 canned head's default loss_reduction) while the "
            "wrapper averages its %d micro-batches (reduction=\"mean\"): each effective "
            "step applies 1/%d of the big batch's gradient. Wrap with gac.wrap(optimizer, "
            "%d, reduction=\"sum\") for the big batch's; keep \"mean\" if that 1/%d "
            "step is what you want." % (summed, steps, steps, steps, steps)))


#: TF 1.x's StepCounterHook (every Estimator, MonitoredTrainingSession) warns
#: when a run leaves global_step where it was: by design on N - 1 runs of N.
_STEP_WARNING = "It seems that global step (tf.train.get_global_step) has not been increased"


class _GlobalStepFilter(logging.Filter):
    def filter(self, record):
        return not str(record.msg).startswith(_STEP_WARNING)


def quiet_global_step_warnings():
    """Drops TF's "global step has not been increased" warnings (once a
    ``gac.wrap`` v1 wrapper is built: its ``global_step`` moves on applies
    only), saying so once."""
    logger = tf.get_logger()
    if any(isinstance(f, _GlobalStepFilter) for f in logger.filters):
        return
    logger.addFilter(_GlobalStepFilter())
    LOG.info("gradacc_compat: global_step advances once per effective step; TF's 'global "
             "step has not been increased' warnings for the runs in between are dropped.")
