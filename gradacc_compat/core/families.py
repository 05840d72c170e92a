"""One small adapter per optimizer family.

The accumulation algorithm (``accumulator.py``) is the same for every
optimizer; what differs is how an optimizer's state is created ahead of time
and whether it can run in a TF1 graph.  Each family answers:

* ``matches(optimizer)``: is this one of mine?  Decided by the methods the
  object has, not by version numbers, so point releases that move a class
  keep working.
* ``prepare(optimizer, variables)``: create slots / moments / ``iterations``
  now, outside any conditional.  Slots created lazily inside the ``tf.cond``
  that gates the apply break (Keras 3 under MirroredStrategy in a
  ``tf.function``: "You must feed a value for placeholder tensor 'cond/...'";
  TF 1.14 eager Keras Adam: fails in ``colocate_vars_with``).
* ``apply(optimizer, grads_and_vars)``: one ordinary ``apply_gradients``,
  built inside ``applying(optimizer)`` (what the family needs around an
  apply that runs in the accumulator's conditional).

and, for ``gac.wrap``'s Keras subclasses: where clipping happens
(``clips_in_apply``), the learning rate as given (``raw_learning_rate`` /
``set_learning_rate``), and the list the Keras save formats keep the
optimizer's state in (``saved_state``).
"""
from __future__ import absolute_import, division, print_function

import contextlib

from gradacc_compat import compat
from gradacc_compat.compat import tf
from gradacc_compat.core import optimizer_slots

__all__ = ["accumulating_steps", "adapter_for", "FAMILIES", "overwritten_by_gradient",
           "synchronizes_replicas", "aggregated_by_sync_replicas"]


class _Family(object):
    #: Short name shown by ``show_versions()`` and in errors.
    name = None
    #: Whether a plain tf.Graph + Session run updates the variables.
    works_in_graph = True
    #: Whether ``apply_gradients`` sums the duplicate rows of a
    #: ``tf.IndexedSlices`` before using it (v1: _deduplicate_indexed_slices;
    #: OptimizerV2: _resource_apply_sparse_duplicate_indices; the 2.11-2.15
    #: optimizer: _deduplicate_sparse_grad).
    sums_duplicate_rows = True
    #: The family's own optimizer classes (by name) whose update with a
    #: ``tf.IndexedSlices`` equals their update with the dense gradient,
    #: zero rows included: none is lazy (Adam's moments decay on every row;
    #: plain SGD moves a zero row by zero).
    rows_as_dense = ()

    def matches(self, optimizer):
        raise NotImplementedError

    def updates_every_row(self, optimizer):
        """Whether a sparse gradient may reach ``optimizer`` dense: its class
        (a ``gac.wrap`` wrapper's wrapped class) is one of ``rows_as_dense``,
        TensorFlow's or Keras' own, not a subclass that may be lazy."""
        cls = getattr(type(optimizer), "_gac_base", None) or type(optimizer)
        own = cls.__module__.split(".")[0] in ("tensorflow", "keras", "tf_keras")
        return own and cls.__name__ in self.rows_as_dense

    def prepare(self, optimizer, variables):
        raise NotImplementedError

    def apply(self, optimizer, grads_and_vars):
        return optimizer.apply_gradients(grads_and_vars)

    @contextlib.contextmanager
    def applying(self, optimizer):
        yield

    def iterations(self, optimizer):
        return getattr(optimizer, "iterations", None)

    def clips_in_apply(self, optimizer):
        """Whether ``clipnorm``/``clipvalue`` act inside ``apply_gradients``
        (so on whatever gradient is applied) rather than where gradients
        are computed."""
        return True

    def raw_learning_rate(self, optimizer):
        """The learning rate as given: a float/variable, a schedule, a callable."""
        return getattr(optimizer, "_learning_rate", None)

    def set_learning_rate(self, optimizer, learning_rate):
        """Replaces a fresh optimizer's learning rate by a schedule or callable."""
        optimizer.learning_rate = learning_rate

    def saved_state(self, optimizer):
        """The list the optimizer's own ``model.save`` formats (HDF5,
        ``.keras``) save and restore its state from, by position; the
        Keras wrappers append the accumulator's variables to it. ``None``
        where the optimizer has none (a LossScaleOptimizer of Keras 2 keeps
        its state in its inner optimizer); checkpoints track the accumulator
        either way.

        The TF 2.11-2.15 optimizer and Keras 3: ``.variables``, which
        ``save_own_variables`` and HDF5 saving read."""
        return getattr(optimizer, "_variables", None)

    def slots(self, optimizer, variable):
        """``{kind: slot variable}`` of ``variable``, kinds named alike in
        every family (see ``optimizer_slots``)."""
        return optimizer_slots.by_name(optimizer, variable, self.saved_state(optimizer) or [])

    def hyperparameters(self, optimizer):
        """Learning rate, betas, epsilon, momentum, nesterov, in Keras' names."""
        return optimizer_slots.keras_hyperparameters(optimizer)

    def __repr__(self):
        return "<%s adapter>" % self.name


class _V1Train(_Family):
    """``tf.compat.v1.train.Optimizer`` (TF 1.14 -> 2.x, graph and eager)."""
    name = "v1-train"
    rows_as_dense = ("AdamOptimizer", "GradientDescentOptimizer")

    def slots(self, optimizer, variable):
        return optimizer_slots.by_slot_name(optimizer, variable)

    def hyperparameters(self, optimizer):
        return optimizer_slots.v1_hyperparameters(optimizer)

    def matches(self, optimizer):
        return isinstance(optimizer, tf.compat.v1.train.Optimizer)

    def prepare(self, optimizer, variables):
        # apply_gradients itself calls _create_slots under init_scope; doing
        # it first, outside the cond, is the same call with the same result.
        # An optimizer that holds others and hands them its calls (a loss
        # scale, tensor2tensor's ConditionalOptimizer, CrossShardOptimizer)
        # has them make theirs too: inside a TF1 cond their non-slot
        # variables would be named under it (cond_1/beta1_power), and a
        # checkpoint written without accumulation would not restore.
        for held in _held_optimizers(optimizer):
            held._create_slots(variables)

    @contextlib.contextmanager
    def applying(self, optimizer):
        """TF1 code looks its non-slot variables up with
        ``_get_non_slot_variable(name, graph=tf.get_default_graph())``. In a
        TF 2.x graph the apply's cond is a ``cond_v2``, whose branch is a
        function graph of its own: the lookup found nothing (``TypeError:
        ... 'NoneType'``). While the apply is built there, each non-slot
        variable made in a graph enclosing it is found under the branch's
        graph too."""
        graph = tf.compat.v1.get_default_graph()
        outer, enclosing = getattr(graph, "outer_graph", None), []
        while outer is not None:
            enclosing.append(outer)
            outer = getattr(outer, "outer_graph", None)
        added = []
        for held in (_held_optimizers(optimizer) if enclosing else ()):
            table = getattr(held, "_non_slot_dict", None)
            if not isinstance(table, dict):
                continue
            for (name, made_in), variable in list(table.items()):
                if any(made_in is g for g in enclosing) and (name, graph) not in table:
                    table[(name, graph)] = variable
                    added.append((table, (name, graph)))
        try:
            yield
        finally:
            for table, key in added:
                table.pop(key, None)


class _OptimizerV2(_Family):
    """Keras OptimizerV2: TF 1.14 tf.keras, TF 2.0-2.10, ``.legacy`` 2.11+."""
    name = "keras-optimizer-v2"
    rows_as_dense = ("Adam",)  # (SGD with momentum is lazy here)

    def matches(self, optimizer):
        return (hasattr(optimizer, "_create_slots") and hasattr(optimizer, "get_slot_names")
                and hasattr(optimizer, "_resource_apply_dense")
                and hasattr(optimizer, "_create_hypers"))

    def prepare(self, optimizer, variables):
        if hasattr(optimizer, "_create_all_weights"):  # TF >= 2.2
            optimizer._create_all_weights(variables)
        else:  # TODO: remove when TF 2.1 is the oldest supported release
            _ = optimizer.iterations
            optimizer._create_hypers()
            optimizer._create_slots(variables)

    def slots(self, optimizer, variable):
        return optimizer_slots.by_slot_name(optimizer, variable)

    def raw_learning_rate(self, optimizer):
        # A LossScaleOptimizer has no hyperparameters of its own.
        return getattr(optimizer, "_hyper", {}).get("learning_rate")

    def saved_state(self, optimizer):
        # What .weights / get_weights() / set_weights() use.
        return getattr(optimizer, "_weights", None)

    def clips_in_apply(self, optimizer):
        # Before TF 2.4 OptimizerV2 clips in _compute_gradients/get_gradients
        # (and fit calls _clip_gradients on 2.2/2.3): per micro-batch under
        # accumulation. TF 2.4 moved it into apply_gradients
        # (_transform_gradients).
        return hasattr(optimizer, "_transform_gradients")


class _Keras2New(_Family):
    """The Keras 2 optimizer of TF 2.11-2.15 (and ``tf_keras``)."""
    name = "keras2-optimizer"
    rows_as_dense = ("Adam",)
    # In a tf.Graph + Session it updates nothing and raises nothing.
    works_in_graph = False

    def matches(self, optimizer):
        return (hasattr(optimizer, "update_step") and hasattr(optimizer, "_var_key")
                and hasattr(optimizer, "build") and not hasattr(optimizer, "stateless_apply"))

    def prepare(self, optimizer, variables):
        optimizer.build(variables)  # returns at once when already built

    def set_learning_rate(self, optimizer, learning_rate):
        # Its setter takes a schedule without the variable that holds the
        # schedule's current value; _build_learning_rate makes both.
        optimizer._learning_rate = optimizer._build_learning_rate(learning_rate)


class _Keras3(_Family):
    """Keras 3 optimizers (TF >= 2.16, the TensorFlow backend)."""
    name = "keras3-optimizer"
    works_in_graph = False
    # Keras 3 uses an IndexedSlices' rows as they come: Adagrad adds each
    # duplicate's square. Under a strategy its all-reduce gathers every
    # replica's rows, duplicates included; its updates of a zero row equal
    # the dense ones (none is lazy), so the accumulator applies dense there.
    sums_duplicate_rows = False
    # Keras' own test_sparse_correctness holds each of these to it.
    rows_as_dense = ("Adadelta", "Adafactor", "Adagrad", "Adam", "Adamax", "AdamW", "Ftrl",
                     "Lion", "Nadam", "RMSprop", "SGD")

    def matches(self, optimizer):
        return hasattr(optimizer, "stateless_apply") and hasattr(optimizer, "build")

    def prepare(self, optimizer, variables):
        if not optimizer.built:
            optimizer.build(variables)


def _held_optimizers(optimizer, depth=3):
    """``optimizer`` and the ``tf.compat.v1.train`` optimizers it holds as
    attributes, and theirs (``depth`` levels), each once, outermost first."""
    found, level = [optimizer], [optimizer]
    for _ in range(depth):
        nested = []
        for opt in level:
            for value in list(getattr(opt, "__dict__", {}).values()):
                if isinstance(value, tf.compat.v1.train.Optimizer) and \
                        not any(value is f for f in found):
                    found.append(value)
                    nested.append(value)
        level = nested
    return found


def overwritten_by_gradient(variable):
    """Whether ``variable``'s "gradient" is its next value, not a step
    (Keras 3 ``overwrite_with_gradient``: float8 training's scales and amax
    histories). Over a cycle that value is the maximum of the micro-batches'
    values, as the big batch's amax is the maximum over all its examples
    (Keras' own accumulation keeps the maximum too)."""
    return bool(getattr(variable, "overwrite_with_gradient", False))


#: Checked in order: the first family whose ``matches`` is true wins.
FAMILIES = (_V1Train(), _Keras3(), _Keras2New(), _OptimizerV2())


def synchronizes_replicas(optimizer):
    """Whether ``optimizer`` is ``tf.compat.v1.train.SyncReplicasOptimizer``:
    it exchanges gradients through parameter-server accumulators on every
    apply, and its token queue and chief queue runner must run on every
    step (gated inside an accumulating cond, they cannot)."""
    return isinstance(optimizer, tf.compat.v1.train.SyncReplicasOptimizer)


#: The ops a SyncReplicasOptimizer's accumulators hand gradients out with.
_SYNC_TAKES = ("AccumulatorTakeGradient", "ResourceAccumulatorTakeGradient",
               "SparseAccumulatorTakeGradient")


def aggregated_by_sync_replicas(gradient):
    """Whether ``gradient`` (a graph tensor or ``IndexedSlices``) was taken
    from a SyncReplicasOptimizer's accumulator: the optimizer being handed
    it is the one a SyncReplicasOptimizer wraps."""
    values = getattr(gradient, "values", gradient)
    op = getattr(values, "op", None) if not tf.executing_eagerly() else None
    return op is not None and op.type in _SYNC_TAKES


def accumulating_steps(optimizer):
    """``steps`` of a ``gac.wrap`` wrapper (it accumulates itself), else None."""
    return getattr(optimizer, "__dict__", {}).get("_gac_steps")


def adapter_for(optimizer):
    """The family adapter for ``optimizer``; raises ``TypeError`` if none fits."""
    if isinstance(optimizer, type):
        raise TypeError(
            "gradacc_compat received the class %s.%s, not an optimizer: create one and "
            "pass that, e.g. %s(learning_rate=1e-3)."
            % (optimizer.__module__, optimizer.__name__, optimizer.__name__))
    for family in FAMILIES:
        if family.matches(optimizer):
            return family
    raise TypeError(
        "gradacc_compat cannot drive %r (type %s.%s): it is not an optimizer of a "
        "family this TensorFlow %s has (tf.compat.v1.train.Optimizer, Keras "
        "OptimizerV2, the TF 2.11-2.15 Keras optimizer, or a Keras 3 optimizer; "
        "tf.keras here is %s). Pass an optimizer instance such as "
        "tf.keras.optimizers.SGD(0.1) or tf.compat.v1.train.AdamOptimizer(1e-3)."
        % (optimizer, type(optimizer).__module__, type(optimizer).__name__,
           compat.TF_VERSION_STRING, compat.KERAS_FLAVOUR))
