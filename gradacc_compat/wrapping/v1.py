"""``gac.wrap`` of a ``tf.compat.v1.train.Optimizer``: a v1 optimizer that
holds the given one (composition, as TF's own SyncReplicasOptimizer does)."""
from __future__ import absolute_import, division, print_function

from gradacc_compat import compat
from gradacc_compat.core import audit, families, horovod_support, saving
from gradacc_compat.distributed import tf1_collectives
from gradacc_compat.compat import tf
from gradacc_compat.wrapping.base import SYNC_REPLICAS, AccumulatingBase

__all__ = ["AccumulatingOptimizerV1"]


class AccumulatingOptimizerV1(AccumulatingBase, tf.compat.v1.train.Optimizer):
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
            raise TypeError(SYNC_REPLICAS % (
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
        return acc.wrapped_step(inner, grads, variables, apply_fn=apply_fn,
                                reduce=horovod_support.rank_reduction(inner))

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
        return self._gac_get_accumulator().apply_pending(
            inner, lambda gv: inner.apply_gradients(gv, global_step=global_step),
            horovod_support.rank_reduction(inner))

    # get_slot/get_slot_names are deliberately NOT forwarded: checkpoints
    # collect slots from every optimizer object, and the same slot under two
    # optimizers is refused ("A slot variable was re-used"). Use
    # opt.inner_optimizer.get_slot(...).

    def variables(self):
        own = list(self._gac_accumulator.variables) if self._gac_accumulator is not None else []
        return self._gac_inner.variables() + own
