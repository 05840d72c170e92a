"""An optimizer's state per variable and its hyperparameters, named alike
in every family, for comparing two trainings (``record`` / ``replay``): the
family adapters in ``families`` call these.

Kinds: ``m`` and ``v`` are Adam's moments (the same quantities in every
family); ``momentum`` is the momentum slot, which v1 ``MomentumOptimizer``
and Keras ``SGD(momentum=)`` define differently (``optimizer_convention``).
"""
from __future__ import absolute_import, division, print_function

import numbers

__all__ = ["by_name", "by_slot_name", "keras_hyperparameters", "v1_hyperparameters",
           "momentum_convention"]

#: Slot names that mean another kind: (optimizer class, slot name) -> kind.
_KINDS = {("SGD", "m"): "momentum", ("Adam", "momentum"): "m", ("Adam", "velocity"): "v",
          ("AdamW", "momentum"): "m", ("AdamW", "velocity"): "v"}
_HYPER = ("learning_rate", "beta_1", "beta_2", "epsilon", "momentum", "nesterov")
#: v1 optimizers keep their arguments in attributes of these names.
_V1_HYPER = {"_lr": "learning_rate", "_learning_rate": "learning_rate", "_beta1": "beta_1",
             "_beta2": "beta_2", "_epsilon": "epsilon", "_momentum": "momentum",
             "_use_nesterov": "nesterov"}


def _kind(optimizer, name):
    return _KINDS.get((type(optimizer).__name__, name), name)


def by_slot_name(optimizer, variable):
    """v1 and OptimizerV2: ``get_slot`` by the optimizer's slot names."""
    kinds = {}
    for name in optimizer.get_slot_names():
        try:
            slot = optimizer.get_slot(variable, name)
        except KeyError:  # OptimizerV2 raises for a variable without slots
            slot = None
        if slot is not None:
            kinds[_kind(optimizer, name)] = slot
    return kinds


def by_name(optimizer, variable, state):
    """The 2.11-2.15 optimizer names a slot ``m/<variable name>``; Keras 3
    ``<variable path, / as _>_momentum``: the slots in ``state`` named so."""
    owns = set([variable.name.split(":")[0]])
    if getattr(variable, "path", None):
        owns.add(variable.path.replace("/", "_"))
    kinds = {}
    for slot in state:
        name = slot.name.split(":")[0]
        if tuple(slot.shape) != tuple(variable.shape):
            continue
        for own in owns:
            kind = (name[len(own) + 1:] if name.startswith(own + "_") else
                    name[:-len(own) - 1] if name.endswith("/" + own) else None)
            if kind:  # (the 2.11-2.15 optimizer's may be "Adam/m")
                kinds[_kind(optimizer, kind.split("/")[-1])] = slot
    return kinds


def _plain(config):
    out = {}
    for key in _HYPER:
        value = config.get(key)
        if isinstance(value, dict):  # a serialized schedule
            value = "schedule:%s" % value.get("class_name", "?")
        elif isinstance(value, bool):
            pass
        elif isinstance(value, numbers.Number) or hasattr(value, "item"):
            try:
                value = float(value)
            except (TypeError, ValueError):  # a tensor in a graph
                value = type(value).__name__
        elif value is not None:
            value = type(value).__name__
        if value is not None:
            out[key] = value
    return out


def keras_hyperparameters(optimizer):
    try:
        config = optimizer.get_config()
    except (AttributeError, NotImplementedError):
        config = {}
    return _plain(config)


def v1_hyperparameters(optimizer):
    return _plain(dict((key, getattr(optimizer, attr)) for attr, key in _V1_HYPER.items()
                       if hasattr(optimizer, attr)))


def momentum_convention(family):
    """What a ``momentum`` slot holds in ``family``: v1 ``MomentumOptimizer``
    the running sum of gradients (the step is lr * it), Keras the step
    itself (lr folded in)."""
    return "sum of gradients" if family == "v1-train" else "scaled step"
