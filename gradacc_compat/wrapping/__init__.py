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

import copy

from gradacc_compat.core import families, horovod_support
from gradacc_compat.core.checks import check_steps
from gradacc_compat.compat import tf
from gradacc_compat.wrapping.base import SYNC_REPLICAS, AccumulatingBase, describe
from gradacc_compat.wrapping.keras import flush_at_epoch_end, keras_custom_objects, keras_subclass
from gradacc_compat.wrapping.options import check_options
from gradacc_compat.wrapping.v1 import AccumulatingOptimizerV1

__all__ = ["wrap", "keras_custom_objects", "flush_at_epoch_end", "AccumulatingOptimizerV1",
           "AccumulatingBase"]


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
        raise type(err)("gac.wrap: %s Wrapping %s." % (err, describe(optimizer)))
    check_options(optimizer, options)
    inner_steps = families.accumulating_steps(optimizer)
    if inner_steps is not None:
        raise ValueError(
            "gac.wrap received %s, which is already a gac.wrap(..., steps=%d) wrapper: "
            "wrapping it again would accumulate %d x %d micro-batches through two "
            "accumulators. Wrap the original optimizer once, with steps=%d."
            % (describe(optimizer), inner_steps, inner_steps, steps, inner_steps * steps))
    if families.synchronizes_replicas(optimizer):
        raise TypeError(SYNC_REPLICAS % ("gac.wrap received " + describe(optimizer),))
    reduce = horovod_support.rank_reduction(optimizer)  # raises for one it cannot drive
    if adapter.name == "v1-train":
        return AccumulatingOptimizerV1(optimizer, steps, **options)
    if _has_state(optimizer):
        raise ValueError(
            "gac.wrap received %s that has already been used (it has slots or "
            "iterations). Wrap a fresh optimizer, before its first apply_gradients; "
            "the wrapper is configured from optimizer.get_config()." % (describe(optimizer),))
    if getattr(optimizer, "gradient_accumulation_steps", None):
        raise ValueError(
            "gac.wrap received %s with Keras' own gradient_accumulation_steps=%r. Use "
            "one or the other: remove gradient_accumulation_steps from the optimizer."
            % (describe(optimizer), optimizer.gradient_accumulation_steps))
    base = type(optimizer)
    if reduce is not None:
        # Horovod's DistributedOptimizer all-reduces where gradients are
        # computed, every micro-step, and its class (it calls
        # super(self.__class__, ...)) cannot be subclassed. The wrapper is
        # the class Horovod derived from, and reduces the accumulated
        # gradient with Horovod's own function, once per effective step.
        base = type(optimizer).__mro__[1]
    cls = keras_subclass(base, adapter)
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
            % (describe(optimizer), type(err).__name__, err, type(copy_err).__name__,
               copy_err))
    wrapper.__class__ = cls
    wrapper._gac_setup(steps, options)
    return wrapper


def _has_state(optimizer):
    if getattr(optimizer, "built", False) or getattr(optimizer, "_built", False):
        return True
    slots = getattr(optimizer, "_slots", None)
    return bool(slots)
