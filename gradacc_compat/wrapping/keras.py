"""``gac.wrap`` of a Keras optimizer (OptimizerV2, the TF 2.11-2.15
optimizer, Keras 3): an instance of a subclass of its own class, made here
at run time and bound by name in ``gradacc_compat.keras_classes``."""
from __future__ import absolute_import, division, print_function

import contextlib

from gradacc_compat import compat, keras_classes
from gradacc_compat.core import audit, families
from gradacc_compat.wrapping import fit_batch
from gradacc_compat.compat import tf
from gradacc_compat.wrapping.base import (ACROSS_WORKERS, NO_BATCH_SIZE, AccumulatingBase,
                                          describe)
from gradacc_compat.wrapping.options import OPTIONS

__all__ = ["keras_subclass", "keras_custom_objects", "flush_at_epoch_end"]

_SUBCLASSES = {}


def keras_subclass(base, adapter):
    """``Accumulating<Base>``: the same class, with accumulation in front."""
    key = (base, adapter.name)
    if key in _SUBCLASSES:
        return _SUBCLASSES[key]
    mixin = _Keras3Mixin if adapter.name == "keras3-optimizer" else _Keras2Mixin
    name = "Accumulating" + ("Legacy" if _is_legacy(base) else "") + base.__name__
    attrs = {"_gac_base": base, "_gac_adapter": adapter}
    # Where Keras creates the optimizer's state ahead of any step (loading a
    # saved model, before it restores that state by position), the
    # accumulator's state is created with it.
    hook = "_create_all_weights" if adapter.name == "keras-optimizer-v2" else "build"
    if hasattr(base, hook):  # OptimizerV2 has _create_all_weights from TF 2.2
        attrs[hook] = _state_hook(getattr(base, hook))
    cls = type(name, (mixin, base), attrs)
    _bind_by_name(cls)
    compat.keras_register_serializable(cls, package="gradacc_compat")
    _SUBCLASSES[key] = cls
    return cls


def _bind_by_name(cls):
    """Makes ``cls`` findable as ``gradacc_compat.keras_classes.<name>``
    (pickle, copy, Keras 3's pickling): see that module."""
    module = keras_classes
    name = cls.__name__
    taken = module.__dict__.get(name)
    if taken is not None and taken is not cls:  # another class of the same name
        name = "%s_%s" % (name, cls._gac_base.__module__.replace(".", "_"))
        cls.__name__ = name
    cls.__module__ = module.__name__
    cls.__qualname__ = name
    setattr(module, name, cls)


def _state_hook(base_method):
    def hook(self, var_list, *args, **kwargs):
        result = base_method(self, var_list, *args, **kwargs)
        self._gac_build_state(var_list)
        return result
    hook.__name__ = base_method.__name__
    hook.__doc__ = base_method.__doc__
    return hook


def _is_legacy(base):
    """A class ``tf.keras.optimizers.legacy`` has under a name whose
    ``tf.keras.optimizers`` class is another one (TF 2.10-2.15, tf_keras):
    the two share names (SGD, Adam) and their serialized names must differ.
    (Neither the module path nor the family tells: 2.10's legacy classes are
    subclasses of the default ones, 2.11's live in optimizer_v2.)"""
    legacy = compat.keras_legacy_optimizers()
    if legacy is None:
        return False
    name = base.__name__
    return (getattr(legacy, name, None) is base
            and getattr(compat.keras_module().optimizers, name, None) is not base)


def keras_custom_objects():
    """``custom_objects`` for loading a model saved with a wrapped optimizer.

    Creates (and registers) the wrapper class of every optimizer class in
    ``tf.keras.optimizers`` (and ``.legacy``), keyed by class name and by the
    registered name::

        model = tf.keras.models.load_model(path, custom_objects=gac.keras_custom_objects())
    """
    found = {}
    modules = [compat.keras_module().optimizers, compat.keras_legacy_optimizers()]
    for module in [m for m in modules if m is not None]:
        for attr in dir(module):
            base = getattr(module, attr)
            if not isinstance(base, type) or base.__name__.startswith("Accumulating"):
                continue
            keras_families = [f for f in families.FAMILIES if f.name != "v1-train" and f.matches(base)]
            if not keras_families:
                continue
            adapter = keras_families[0]
            cls = keras_subclass(base, adapter)
            found[cls.__name__] = cls
            found["gradacc_compat>" + cls.__name__] = cls
    return found


class _KerasMixin(AccumulatingBase):
    """Shared by the Keras subclasses; ``_gac_base`` is the wrapped class,
    ``_gac_adapter`` its family's adapter (set by ``keras_subclass``)."""

    _gac_base = None
    _gac_adapter = None

    def get_config(self):
        config = super(_KerasMixin, self).get_config()
        config["gac_steps"] = self._gac_steps
        for key in OPTIONS:  # every option of wrap() round-trips
            if key in self._gac_options:
                config["gac_" + key] = self._gac_options[key]
        acc = self._gac_accumulator
        sparse = acc.sparse_indices if acc is not None else self._gac_sparse_hint()
        if sparse:  # which variables keep row marks: saved state is positional
            config["gac_sparse"] = list(sparse)
        return config

    def _gac_sparse_hint(self):
        return self.__dict__.get("_gac_sparse", ())

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        steps = config.pop("gac_steps", None)
        sparse = config.pop("gac_sparse", ())
        if steps is None:
            raise ValueError("%s.from_config needs `gac_steps` in the config (it is what "
                             "get_config() returns); received keys %s."
                             % (cls.__name__, sorted(config)))
        options = dict((key, config.pop("gac_" + key)) for key in OPTIONS
                       if "gac_" + key in config)
        instance = cls._gac_create(config, steps, options, custom_objects)
        object.__setattr__(instance, "_gac_sparse", tuple(sparse))
        return instance

    @classmethod
    def _gac_create(cls, config, steps, options, custom_objects=None):
        """An instance of ``cls`` built by the wrapped class's own from_config
        (which knows its schedules and renamed arguments)."""
        base_from_config = cls._gac_base.from_config.__func__
        instance = base_from_config(cls, config, custom_objects=custom_objects)
        instance._gac_setup(steps, options)
        return instance

    @compat.do_not_convert
    def flush(self):
        """Applies a pending partial cycle (a no-op when nothing is pending)."""
        return self._gac_get_accumulator().apply_pending(self, self._gac_apply_inner,
                                                          self.__dict__.get("_gac_reduce"))

    @compat.do_not_convert
    def _gac_accumulate(self, grads, variables, *args, **kwargs):
        def apply_fn(accumulated):
            return self._gac_apply_inner(accumulated, *args, **kwargs)
        acc = self._gac_get_accumulator()
        weight = None
        if acc.reduction == "mean":
            # Each micro-batch counts for its examples: a short last batch
            # weighs what it holds, as in the big batch. (Across workers the
            # total weight would take one more all-reduce per effective
            # step: there every micro-batch counts alike.)
            weight, under_fit = fit_batch.example_count()
            if weight is not None and compat.spans_workers(compat.get_strategy()):
                weight = None
                audit.warn_once(self, "batch size", ACROSS_WORKERS)
            elif weight is None and under_fit:
                audit.warn_once(self, "batch size", NO_BATCH_SIZE)
        result = acc.wrapped_step(self, list(grads), list(variables), weight=weight,
                                  apply_fn=apply_fn, reduce=self.__dict__.get("_gac_reduce"))
        compat.keras_track_graph_variables(acc.variables)
        self._gac_register_state()
        return result

    def _gac_build_state(self, var_list):
        """The accumulator for ``var_list``, created now where that is safe
        (not inside a strategy's replica function: the first step does it)."""
        acc = self._gac_accumulator
        if acc is None or not acc.built:
            if tf.distribute.has_strategy() and not compat.in_cross_replica_context():
                return
            self._gac_get_accumulator().build(list(var_list), self._gac_sparse_hint())
        self._gac_register_state()

    def _gac_register_state(self):
        """Appends the accumulator's variables, each once, to the list the
        Keras save formats (HDF5, .keras) save and restore by position, so a
        model saved mid-cycle loads with its pending micro-batches. (Row
        marks of sparse variables may come after the accumulators: a loaded
        wrapper makes them up front, from ``gac_sparse`` in its config.)"""
        acc = self._gac_accumulator
        if acc is None or not acc.built:
            return
        registered = self.__dict__.get("_gac_registered")
        if registered is None:
            registered = set()
            object.__setattr__(self, "_gac_registered", registered)
        new = [v for v in acc.state_variables() if id(v) not in registered]
        state = self._gac_adapter.saved_state(self)
        if new and state is not None:
            state.extend(new)
        registered.update(id(v) for v in new)


class _Keras2Mixin(_KerasMixin):
    """OptimizerV2 and the TF 2.11-2.15 optimizer: ``apply_gradients``.

    OptimizerV2 before TF 2.4 clips where gradients are computed
    (``_compute_gradients``, ``get_gradients``, and ``fit``'s call of
    ``_clip_gradients`` on 2.2/2.3), which under accumulation would clip each
    micro-batch. The wrapper takes that clipping out of the gradient path and
    applies it to the accumulated gradient instead, once per effective step,
    whenever the gradient path asked for it.
    """

    # TF 2.2/2.3 fit all-reduces gradients BEFORE apply_gradients when this
    # is true: once per micro-step. False: apply_gradients reduces, once per
    # effective step. (Later releases do not read it.)
    _HAS_AGGREGATE_GRAD = False

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        grads, variables = zip(*list(grads_and_vars))
        return self._gac_accumulate(grads, variables, *args, **kwargs)

    def _gac_apply_inner(self, accumulated, *args, **kwargs):
        if getattr(self, "_gac_clip_pending", False):
            accumulated = self._gac_clip(accumulated)
        return self._gac_base.apply_gradients(self, accumulated, *args, **kwargs)

    # ----------------------------------------------- clipping before TF 2.4
    def _gac_defers_clipping(self):
        return not self._gac_adapter.clips_in_apply(self)

    def _clip_gradients(self, grads):  # TF 2.2/2.3 only
        if not self._gac_defers_clipping():
            return super(_Keras2Mixin, self)._clip_gradients(grads)
        object.__setattr__(self, "_gac_clip_pending", True)
        return grads

    def _compute_gradients(self, *args, **kwargs):
        with self._gac_clipping_deferred():
            return super(_Keras2Mixin, self)._compute_gradients(*args, **kwargs)

    def get_gradients(self, *args, **kwargs):
        with self._gac_clipping_deferred():
            return super(_Keras2Mixin, self).get_gradients(*args, **kwargs)

    @contextlib.contextmanager
    def _gac_clipping_deferred(self):
        """TF 1.14-2.1 test ``hasattr(self, "clipnorm")`` inline: hide the
        attributes while the base class computes gradients."""
        if not self._gac_defers_clipping() or hasattr(self._gac_base, "_clip_gradients"):
            yield  # clips in apply, or routes clipping through _clip_gradients
            return
        hidden = dict((k, self.__dict__.pop(k)) for k in ("clipnorm", "clipvalue")
                      if self.__dict__.get(k) is not None)
        if hidden:
            object.__setattr__(self, "_gac_clip_pending", True)
        try:
            yield
        finally:
            self.__dict__.update(hidden)

    def _gac_clip(self, grads_and_vars):
        """OptimizerV2's own clipping (before TF 2.4): each tensor by its
        norm, then by value."""
        clipnorm, clipvalue = getattr(self, "clipnorm", None), getattr(self, "clipvalue", None)
        out = []
        for grad, var in grads_and_vars:
            if grad is not None and clipnorm is not None:
                grad = tf.clip_by_norm(grad, clipnorm)
            if grad is not None and clipvalue is not None:
                grad = tf.clip_by_value(grad, -clipvalue, clipvalue)
            out.append((grad, var))
        return out


class _Keras3Mixin(_KerasMixin):
    """Keras 3: ``apply`` (``apply_gradients`` calls it)."""

    def apply(self, grads, trainable_variables=None):
        if trainable_variables is None:
            trainable_variables = self._trainable_variables
        return self._gac_accumulate(grads, trainable_variables)

    def _gac_apply_inner(self, accumulated):
        self._gac_base.apply(self, [g for g, _ in accumulated], [v for _, v in accumulated])


def flush_at_epoch_end():
    """A Keras callback that applies each epoch's partial cycle at its end.

    The epoch-boundary policy for ``fit``: without it a cycle continues into
    the next epoch; with it, the last micro-batches of an epoch are applied
    as their own (correctly weighted) effective step::

        model.fit(x, y, batch_size=32, callbacks=[gac.flush_at_epoch_end()])
    """
    keras = compat.keras_module()

    class FlushAtEpochEnd(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            optimizer = self.model.optimizer
            if not isinstance(optimizer, AccumulatingBase):
                raise TypeError("flush_at_epoch_end() needs a gac.wrap(...) optimizer; the "
                                "model was compiled with %s." % (describe(optimizer),))
            applied = optimizer.flush()
            if not compat.eager_by_default():  # TF1 graph: Keras' session runs it
                keras.backend.get_session().run(applied)

    return FlushAtEpochEnd()


keras_classes.register_maker(keras_custom_objects)
