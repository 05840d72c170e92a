"""Keras adapters: what differs between Keras 2 (built into TF or
``keras`` 2.x), ``tf_keras`` and Keras 3, and between TF 1.x's and TF 2.x's
``fit`` under a strategy."""
from __future__ import absolute_import, division, print_function

from gradacc_compat.compat.facts import KERAS_FLAVOUR, TF_VERSION_STRING, keras_module
from gradacc_compat.compat.graph import eager_by_default

__all__ = [
    "keras_legacy_optimizers", "keras_track_graph_variables", "progress_bar",
    "keras_register_serializable", "keras_own_accumulation", "keras_fit_per_replica_batch",
    "keras_fit_batch_size",
]




def keras_legacy_optimizers():
    """``tf.keras.optimizers.legacy`` (OptimizerV2) where it is usable, else None.

    2.9-2.15 and tf_keras have it; Keras 3 keeps the name but raises on use.
    """
    keras = keras_module()
    if keras is None or KERAS_FLAVOUR == "keras3":
        return None
    legacy = getattr(keras.optimizers, "legacy", None)
    return legacy if legacy is not None and hasattr(legacy, "SGD") else None


def keras_track_graph_variables(variables):
    """Let Keras' TF1-graph session initialize ``variables``.

    In a TF1 graph, ``model.fit`` initializes only the variables Keras itself
    tracks (``tensorflow.python.keras.backend.track_variable``, not exported
    as tf.keras.backend.track_variable). Eager runs need nothing.
    # TODO: remove when TF 1.15 is no longer supported.
    """
    if eager_by_default() or KERAS_FLAVOUR != "keras2":
        return
    try:
        from tensorflow.python.keras import backend as keras_backend
    except ImportError:
        return
    track = getattr(keras_backend, "track_variable", None)
    if track is not None:
        for variable in variables:
            track(variable)


def progress_bar(target, stateful_metrics=()):
    """Keras' ``Progbar`` (``tf.keras.utils.Progbar``: TF 1.14 to 2.15,
    ``tf_keras`` and Keras 3 alike), or ``None`` where no Keras loads."""
    keras = keras_module()
    progbar = getattr(getattr(keras, "utils", None), "Progbar", None)
    if progbar is None:
        return None
    return progbar(target, stateful_metrics=list(stateful_metrics))


def keras_register_serializable(cls, package):
    """Register ``cls`` for Keras (de)serialization, where Keras offers it
    (``tf.keras.utils.register_keras_serializable``: TF >= 2.1 and Keras 3)."""
    keras = keras_module()
    register = getattr(getattr(keras, "utils", None), "register_keras_serializable", None)
    if register is not None:
        register(package=package)(cls)
    return cls


def keras_own_accumulation():
    """Whether Keras optimizers take ``gradient_accumulation_steps`` (Keras 3)."""
    return KERAS_FLAVOUR == "keras3"


def keras_fit_per_replica_batch(strategy):
    """Whether Keras ``fit`` under ``strategy`` reads ``batch_size`` per replica.

    True for TF 1.x Keras with a ``tf.contrib.distribute`` strategy (whose
    distributed ``fit`` is then also not the single-device ``fit``: it feeds
    and reduces differently); ``tf.distribute`` strategies (TF2) read
    ``batch_size`` as the global batch.
    """
    # TODO: remove when TF 1.15 is no longer supported.
    return strategy is not None and not getattr(strategy.extended, "_global_batch_size", True)


def keras_fit_batch_size(strategy, global_batch):
    """The ``batch_size`` to give Keras ``fit`` for ``global_batch`` examples
    per step under ``strategy`` (``None``: no strategy)."""
    if not keras_fit_per_replica_batch(strategy):
        return global_batch
    replicas = strategy.num_replicas_in_sync
    if global_batch % replicas:
        raise ValueError("A global batch of %d does not split over %d replicas; this "
                         "Keras (TF %s) takes a per-replica batch_size under %s."
                         % (global_batch, replicas, TF_VERSION_STRING, type(strategy).__name__))
    return global_batch // replicas
