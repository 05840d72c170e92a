"""What makes accumulation differ from the big batch, found in a model.

``batch_dependent_layers(model)`` names the layers whose output for one
example depends on the rest of its batch (batch statistics) or on random
draws: with them, N micro-batches of b cannot equal one batch of N*b, with
or without gradacc_compat. ``verify`` uses it to say what to do on FAIL;
the accumulator uses it (``first_use``) for a warning, once.
"""
from __future__ import absolute_import, division, print_function

import logging
import warnings

__all__ = ["AccumulationWarning", "batch_dependent_layers", "explain"]

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


def warn_once(owner, key, message):
    """``warnings.warn(message)`` once per ``owner`` and ``key``."""
    said = owner.__dict__.setdefault("_gac_audited", set())
    if key in said:
        return
    said.add(key)
    warnings.warn("gradacc_compat: " + message, AccumulationWarning, stacklevel=4)
