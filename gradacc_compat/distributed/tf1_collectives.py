"""TF 1.x collectives across workers: the apply in a session run of its own.

Under ``tf.contrib.distribute.CollectiveAllReduceStrategy`` (or TF 1.x's
``MultiWorkerMirroredStrategy``) across worker processes, TF's collective
ops fail now and then in a run that may all-reduce or not -- the apply in a
``tf.cond``, as ``GradientAccumulator.step`` builds it -- and not in a run
that always all-reduces (see ``compat.collectives_in_tf1_graph``). So the
micro-step's run only accumulates, and the apply runs on its own after
every N micro-steps: in a custom loop the loop runs it; under
``gac.wrap(...).minimize`` (estimators, ``MonitoredTrainingSession``) the
hook of ``opt.make_session_run_hook()`` does.
"""
from __future__ import absolute_import, division, print_function

from gradacc_compat.compat import tf

__all__ = ["SplitApply", "split_apply", "ApplyHook"]

_NO_HOOK = (
    "gac.wrap(...).minimize under TF 1.x collectives across workers only accumulates; "
    "its apply runs from the optimizer's session hook, which did not run: pass "
    "training_hooks=[optimizer.make_session_run_hook()] in the EstimatorSpec (or "
    "hooks=[...] to MonitoredTrainingSession).")


class SplitApply(object):
    """``accumulate_op`` (the micro-step's run), ``apply_op`` (a run of its
    own) and ``pending`` (this worker's pending micro-step count)."""

    def __init__(self, accumulate_op, apply_op, pending, steps):
        self.accumulate_op, self.apply_op = accumulate_op, apply_op
        self.pending, self.steps = pending, steps


def split_apply(accumulator, optimizer, gradients, variables, apply_fn):
    """In replica context: the accumulate op, which fails with a message
    naming the hook when a cycle is already full (the hook did not apply
    it), and the apply op. Every replica calls this: building the apply
    meets the others in ``merge_call``."""
    full = tf.compat.v1.assert_less(accumulator.pending_count(),
                                    tf.constant(accumulator.steps, tf.int64),
                                    message=_NO_HOOK)
    with tf.control_dependencies([full]):
        count = accumulator.accumulate(gradients, variables)
    apply_op = accumulator.apply_pending(optimizer, apply_fn)
    return SplitApply(count, apply_op, tf.identity(accumulator.pending_count()),
                      accumulator.steps)


class ApplyHook(tf.compat.v1.train.SessionRunHook):
    """Runs the apply in a session run of its own once a cycle is full.

    The host counts session runs since the last apply: never fewer than the
    micro-steps among them, so only when it reaches ``steps`` does the hook
    read the count on the device (one small run per cycle when every run
    is a micro-step, as in an estimator), and it applies when that is full.
    A session restored mid-cycle starts from the restored count. Several
    hooks over one accumulator (one per replica's wrapper) apply once: the
    first empties the cycle, the others then read it empty."""

    def __init__(self, split):
        self._split = split
        self._runs = 0
        self.applies = 0  # the apply runs this hook made

    def after_create_session(self, session, coord):
        self._runs = int(session.run(self._split.pending))

    def after_run(self, run_context, run_values):
        self._runs += 1
        if self._runs < self._split.steps:
            return
        session = run_context.session
        self._runs = int(session.run(self._split.pending))
        if self._runs >= self._split.steps:
            session.run(self._split.apply_op)
            self._runs = 0
            self.applies += 1
