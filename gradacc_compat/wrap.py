"""``gac.wrap(optimizer, steps)``: accumulation behind the optimizer API.

The result is an optimizer of the wrapped optimizer's family, so ``compile``,
``fit``, ``minimize``, estimators and checkpoints accept it:

* ``tf.compat.v1.train.Optimizer``: a ``tf.compat.v1.train.Optimizer`` that
  holds the given one (composition, as TF's own SyncReplicasOptimizer does):
  ``compute_gradients`` is the inner one's, ``apply_gradients`` accumulates
  and applies with the inner optimizer -- and its ``global_step`` -- once per
  effective step.
* Keras optimizers (OptimizerV2, the TF 2.11-2.15 optimizer, Keras 3): an
  instance of a subclass of the given optimizer's own class, configured from
  its ``get_config()``; its ``apply_gradients``/``apply`` accumulate and call
  the class's own implementation once per effective step, so clipping, weight
  decay, EMA, loss-scale unscaling, LR schedules and ``iterations`` all act on
  the accumulated gradient, once.
"""
from __future__ import absolute_import, division, print_function

import contextlib
import copy
import importlib

from gradacc_compat import (audit, compat, families, fit_batch, horovod_support, saving,
                            tf1_collectives)
from gradacc_compat._checks import check_nonfinite, check_reduction, check_steps, check_transform
from gradacc_compat.accumulator import GradientAccumulator, once_per_strategy
from gradacc_compat.compat import tf

__all__ = ["wrap", "keras_custom_objects", "flush_at_epoch_end", "AccumulatingOptimizerV1"]

#: wrap()'s options that are configuration (get_config keeps them);
#: ``transform`` is code: accepted, passed on, not kept in a config.
_OPTIONS = ("reduction", "name", "nonfinite", "clip_global_norm")
_ACCEPTED = _OPTIONS + ("transform",)
# Arguments users pass to wrap() that belong to the optimizer being wrapped.
_INNER_ARGUMENTS = (
    "learning_rate", "lr", "clipnorm", "clipvalue", "global_clipnorm",
    "weight_decay", "use_ema", "ema_momentum", "ema_overwrite_frequency",
    "momentum", "nesterov", "beta_1", "beta_2", "epsilon", "amsgrad", "decay",
    "loss_scale_factor", "gradient_accumulation_steps", "jit_compile",
    "use_locking", "global_step",
)


def wrap(optimizer, steps, **options):
    """Returns ``optimizer`` accumulating ``steps`` micro-batches per update.

    Usage::

        opt = gac.wrap(tf.keras.optimizers.Adam(1e-3), steps=4)
        model.compile(optimizer=opt, loss="mse")
        model.fit(x, y, batch_size=32)          # effective batch 4 x 32

        opt = gac.wrap(tf.compat.v1.train.AdamOptimizer(1e-3), steps=4)
        train_op = opt.minimize(loss, global_step=tf.compat.v1.train.get_or_create_global_step())

    Args:
      optimizer: a ``tf.compat.v1.train.Optimizer`` or a Keras optimizer
        (OptimizerV2 / legacy, the TF 2.11-2.15 optimizer, Keras 3) that has
        not been used yet.
      steps: micro-batches per applied update, an int >= 1.
      **options: ``reduction`` ("mean" or "sum"), ``name``, ``nonfinite``
        ("apply", "skip" or "raise"), ``clip_global_norm`` and ``transform``
        (see ``GradientAccumulator``); anything else belongs on the
        optimizer being wrapped.

    Returns:
      An optimizer of the same family. ``iterations`` / ``global_step``
      count effective steps; ``micro_step`` counts pending micro-batches.

    Raises:
      TypeError: not an optimizer, or an argument that belongs on it.
      ValueError: ``steps`` is not an int >= 1, or the optimizer has state.
    """
    adapter = families.adapter_for(optimizer)
    try:
        steps = check_steps(steps)
    except (TypeError, ValueError) as err:
        raise type(err)("gac.wrap: %s Wrapping %s." % (err, _describe(optimizer)))
    _check_options(optimizer, options)
    inner_steps = families.accumulating_steps(optimizer)
    if inner_steps is not None:
        raise ValueError(
            "gac.wrap received %s, which is already a gac.wrap(..., steps=%d) wrapper: "
            "wrapping it again would accumulate %d x %d micro-batches through two "
            "accumulators. Wrap the original optimizer once, with steps=%d."
            % (_describe(optimizer), inner_steps, inner_steps, steps, inner_steps * steps))
    if families.synchronizes_replicas(optimizer):
        raise TypeError(_SYNC_REPLICAS % ("gac.wrap received " + _describe(optimizer),))
    reduce = horovod_support.rank_reduction(optimizer)  # raises for one it cannot drive
    if adapter.name == "v1-train":
        return AccumulatingOptimizerV1(optimizer, steps, **options)
    if _has_state(optimizer):
        raise ValueError(
            "gac.wrap received %s that has already been used (it has slots or "
            "iterations). Wrap a fresh optimizer, before its first apply_gradients; "
            "the wrapper is configured from optimizer.get_config()." % (_describe(optimizer),))
    if getattr(optimizer, "gradient_accumulation_steps", None):
        raise ValueError(
            "gac.wrap received %s with Keras' own gradient_accumulation_steps=%r. Use "
            "one or the other: remove gradient_accumulation_steps from the optimizer."
            % (_describe(optimizer), optimizer.gradient_accumulation_steps))
    base = type(optimizer)
    if reduce is not None:
        # Horovod's DistributedOptimizer all-reduces where gradients are
        # computed, every micro-step, and its class (it calls
        # super(self.__class__, ...)) cannot be subclassed. The wrapper is
        # the class Horovod derived from, and reduces the accumulated
        # gradient with Horovod's own function, once per effective step.
        base = type(optimizer).__mro__[1]
    cls = _keras_subclass(base, adapter)
    try:
        config = optimizer.get_config()
    except (AttributeError, NotImplementedError, TypeError, ValueError) as err:
        return _copied_into(cls, optimizer, steps, options, err)
    # A schedule or callable learning rate is carried over as the object
    # itself: get_config() evaluates callables (OptimizerV2) and from_config
    # cannot rebuild unregistered schedules or lambdas (Keras 3).
    learning_rate = adapter.raw_learning_rate(optimizer)
    carry = callable(learning_rate) and "learning_rate" in config
    if carry:
        config["learning_rate"] = 0.0  # a placeholder, replaced below
    wrapper = cls._gac_create(config, steps, options)
    if carry:
        adapter.set_learning_rate(wrapper, learning_rate)
    if reduce is not None:
        object.__setattr__(wrapper, "_gac_reduce", reduce)
    return wrapper


def _copied_into(cls, optimizer, steps, options, err):
    """The wrapper as a copy of ``optimizer``, for optimizers whose own
    ``get_config()`` fails (TF 1.14's Keras Ftrl calls a misspelt
    ``_serializer_hyperparameter``): a fresh optimizer's attributes are all
    its settings, so a copy of it, retyped to the wrapper class, is the
    same optimizer accumulating."""
    # The strategy it was made under is shared, not copied (the TF 2.11-2.15
    # optimizer keeps one; the default strategy exists once per process).
    memo = dict((id(v), v) for v in vars(optimizer).values()
                if isinstance(v, tf.distribute.Strategy))
    try:
        wrapper = copy.deepcopy(optimizer, memo)
    except Exception as copy_err:  # pylint: disable=broad-except
        raise ValueError(
            "gac.wrap cannot rebuild %s: its own get_config() raised %s: %s, and it "
            "cannot be copied either (%s: %s). Wrap an optimizer whose get_config() "
            "works, or accumulate with gac.GradientAccumulator in a custom loop."
            % (_describe(optimizer), type(err).__name__, err, type(copy_err).__name__,
               copy_err))
    wrapper.__class__ = cls
    wrapper._gac_setup(steps, options)
    return wrapper


def _describe(optimizer):
    return "%s.%s (TF %s, tf.keras is %s)" % (
        type(optimizer).__module__, type(optimizer).__name__,
        compat.TF_VERSION_STRING, compat.KERAS_FLAVOUR)


def _check_options(optimizer, options):
    for key in options:
        if key in _ACCEPTED:
            continue
        if key in _INNER_ARGUMENTS:
            raise TypeError(
                "gac.wrap(..., %s=%r): `%s` belongs on the optimizer being wrapped, "
                "not on the wrapper. Received optimizer %s; create it with %s=... "
                "and wrap that." % (key, options[key], key, _describe(optimizer), key))
        raise TypeError("gac.wrap() got an unexpected option %r (accepted: %s). Received "
                        "optimizer %s." % (key, ", ".join(_ACCEPTED), _describe(optimizer)))
    try:
        if "reduction" in options:
            check_reduction(options["reduction"])
        if "nonfinite" in options:
            check_nonfinite(options["nonfinite"])
        check_transform(options.get("transform"), options.get("clip_global_norm"))
    except (TypeError, ValueError) as err:
        raise type(err)("gac.wrap: %s Wrapping %s." % (err, _describe(optimizer)))


def _has_state(optimizer):
    if getattr(optimizer, "built", False) or getattr(optimizer, "_built", False):
        return True
    slots = getattr(optimizer, "_slots", None)
    return bool(slots)


class _AccumulatingBase(object):
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
                acc = GradientAccumulator(self._gac_steps, **self._gac_options)
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


_NO_BATCH_SIZE = (
    "Keras fit calls this wrapped optimizer, but the micro-batch it trains was not "
    "found (no train_step(self, data) on the stack): every micro-batch counts alike, "
    "so a short last batch of an epoch weighs as much as a full one, unlike in the big "
    "batch. Use batch sizes that divide the data, drop the remainder "
    "(dataset.batch(b, drop_remainder=True)), or keep train_step's `data` argument.")


_ACROSS_WORKERS = (
    "Keras fit with a wrapped optimizer across workers: every micro-batch counts alike "
    "(weighting each by its examples would take one more all-reduce per effective "
    "step), so a short last batch of an epoch weighs as much as a full one, unlike in "
    "the big batch. Use batch sizes that divide the data, or drop the remainder "
    "(dataset.batch(b, drop_remainder=True)).")


_SYNC_REPLICAS = (
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


# ---------------------------------------------------------------- TF1 family
class AccumulatingOptimizerV1(_AccumulatingBase, tf.compat.v1.train.Optimizer):
    """A ``tf.compat.v1.train.Optimizer`` that accumulates ``steps`` calls.

    ``minimize(loss, global_step=...)`` advances ``global_step`` once per
    effective step (so ``Estimator.train(max_steps=K)`` runs K effective
    steps, and LR schedules on ``global_step`` see effective steps).
    """

    def __init__(self, optimizer, steps, reduction="mean", name=None, **options):
        # A delegating optimizer (tensor2tensor's ConditionalOptimizer) may
        # never call Optimizer.__init__: no get_name() then.
        inner_name = getattr(optimizer, "_name", None) or type(optimizer).__name__
        super(AccumulatingOptimizerV1, self).__init__(
            use_locking=False, name=name or "Accumulating" + inner_name)
        self._gac_inner = optimizer
        options["reduction"] = reduction
        self._gac_setup(steps, options)
        self._track_trackable(optimizer, name="inner_optimizer")

    @property
    def inner_optimizer(self):
        return self._gac_inner

    def compute_gradients(self, *args, **kwargs):
        # This process's own gradients: a Horovod DistributedOptimizer's
        # all-reduce runs on the accumulated gradient, in the apply.
        local = horovod_support.local_gradients_optimizer(self._gac_inner)
        return local.compute_gradients(*args, **kwargs)

    @compat.do_not_convert
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=1,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None, **kwargs):
        """``Optimizer.minimize``; keyword arguments of the inner optimizer's
        ``apply_gradients`` (contrib AdamW's ``decay_var_list``) reach it."""
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        if not [g for g, _ in grads_and_vars if g is not None]:
            raise ValueError("No gradients provided for any variable: %s. Check that the loss "
                             "depends on them." % ([str(v) for _, v in grads_and_vars],))
        audit.warn_if_sum_reduced(self, loss, self._gac_options.get("reduction", "mean"),
                                  self._gac_steps)
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name,
                                    **kwargs)

    @compat.do_not_convert
    def apply_gradients(self, grads_and_vars, global_step=None, name=None, **kwargs):
        """Accumulates; every ``steps``-th call applies the mean with the
        inner optimizer's ``apply_gradients(..., global_step, name,
        **kwargs)``. Returns a boolean tensor: true on the runs that
        applied (use it for what belongs to the effective step: a step
        counter of your own, an EMA)."""
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("apply_gradients received no (gradient, variable) pairs.")
        grads, variables = zip(*grads_and_vars)
        if any(families.aggregated_by_sync_replicas(g) for g in grads):
            raise TypeError(_SYNC_REPLICAS % (
                "%s received gradients from a SyncReplicasOptimizer's accumulators "
                "(SyncReplicasOptimizer(gac.wrap(...)))" % type(self).__name__,))
        self._gac_once_per_graph()
        inner = self._gac_inner

        def apply_fn(accumulated):
            return inner.apply_gradients(accumulated, global_step=global_step, name=name,
                                         **kwargs)

        acc = self._gac_get_accumulator()
        saving.register(acc)  # TF1 graphs: restores a model_dir written without it
        audit.quiet_global_step_warnings()
        if compat.collectives_in_tf1_graph(compat.get_strategy()):
            split = tf1_collectives.split_apply(acc, inner, grads, variables, apply_fn)
            object.__setattr__(self, "_gac_split", split)
            return tf.group(split.accumulate_op)
        object.__setattr__(self, "_gac_split", False)
        return acc._step(inner, grads, variables, apply_fn=apply_fn)

    def _gac_once_per_graph(self):
        """One train op per graph (and replica): two built from one wrapper
        share its accumulator, and in one session.run race on its counters
        (tf.group(opt.minimize(l1), opt.minimize(l2)): 40-52 applies for 40
        runs), or, run alternately, each apply drops the other's pending
        gradients for the variables it does not list."""
        graph = tf.compat.v1.get_default_graph()
        if tf.executing_eagerly():
            return
        ctx = tf.distribute.get_replica_context()
        replica = 0 if ctx is None or compat.in_cross_replica_context() \
            else compat.replica_index(ctx)
        built = self.__dict__.setdefault("_gac_built", set())
        key = (id(graph), replica)
        if key in built:
            raise ValueError(
                "%s.minimize/apply_gradients was already built into this graph: two train "
                "ops of one gac.wrap(...) wrapper share its accumulator, race on its counters "
                "when run together and drop each other's pending gradients when run in turn. "
                "Minimize the sum of the losses once (the big batch's gradient of l1 + l2), "
                "or wrap one optimizer per train op." % type(self).__name__)
        built.add(key)

    def make_session_run_hook(self):
        """The hook that applies, for ``minimize`` under TF 1.x collectives
        across workers (``CollectiveAllReduceStrategy``, 1.x
        ``MultiWorkerMirroredStrategy``): there the train op only
        accumulates, and the hook runs the apply in a session run of its
        own once a cycle is full (see ``tf1_collectives``). Elsewhere the
        train op applies and the hook does nothing. Call it after
        ``minimize``; pass it as ``EstimatorSpec(training_hooks=[...])`` or
        to ``MonitoredTrainingSession(hooks=[...])``."""
        split = self.__dict__.get("_gac_split")
        if split is None:
            raise ValueError(
                "%s.make_session_run_hook() was called before minimize()/apply_gradients(): "
                "the hook runs the apply op that minimize builds. Call minimize first, then "
                "make_session_run_hook()." % type(self).__name__)
        if split is False:
            return tf.compat.v1.train.SessionRunHook()
        return tf1_collectives.ApplyHook(split)

    @compat.do_not_convert
    def flush(self, global_step=None):
        """Applies a pending partial cycle (a no-op when nothing is pending)."""
        inner = self._gac_inner
        return self._gac_get_accumulator()._apply_pending(
            inner, lambda gv: inner.apply_gradients(gv, global_step=global_step))

    # get_slot/get_slot_names are deliberately NOT forwarded: checkpoints
    # collect slots from every optimizer object, and the same slot under two
    # optimizers is refused ("A slot variable was re-used"). Use
    # opt.inner_optimizer.get_slot(...).

    def variables(self):
        own = list(self._gac_accumulator.variables) if self._gac_accumulator is not None else []
        return self._gac_inner.variables() + own


# -------------------------------------------------------------- Keras families
_SUBCLASSES = {}


def _keras_subclass(base, adapter):
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
    # (importlib: on Python 2 that module makes the classes while it is
    # being imported, and `from gradacc_compat import ...` fails then.)
    module = importlib.import_module("gradacc_compat.keras_classes")
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
            cls = _keras_subclass(base, adapter)
            found[cls.__name__] = cls
            found["gradacc_compat>" + cls.__name__] = cls
    return found


class _KerasMixin(_AccumulatingBase):
    """Shared by the Keras subclasses; ``_gac_base`` is the wrapped class,
    ``_gac_adapter`` its family's adapter (set by ``_keras_subclass``)."""

    _gac_base = None
    _gac_adapter = None

    def get_config(self):
        config = super(_KerasMixin, self).get_config()
        config["gac_steps"] = self._gac_steps
        for key in _OPTIONS:  # every option of wrap() round-trips
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
        options = dict((key, config.pop("gac_" + key)) for key in _OPTIONS
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
        return self._gac_get_accumulator()._apply_pending(self, self._gac_apply_inner,
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
                audit.warn_once(self, "batch size", _ACROSS_WORKERS)
            elif weight is None and under_fit:
                audit.warn_once(self, "batch size", _NO_BATCH_SIZE)
        result = acc._step(self, list(grads), list(variables), weight=weight,
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
            self._gac_get_accumulator()._maybe_build(list(var_list), self._gac_sparse_hint())
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
        new = [v for v in acc._state_variables() if id(v) not in registered]
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
            if not isinstance(optimizer, _AccumulatingBase):
                raise TypeError("flush_at_epoch_end() needs a gac.wrap(...) optimizer; the "
                                "model was compiled with %s." % (_describe(optimizer),))
            applied = optimizer.flush()
            if not compat.eager_by_default():  # TF1 graph: Keras' session runs it
                keras.backend.get_session().run(applied)

    return FlushAtEpochEnd()
