"""Small op helpers of the accumulator (functions of tensors and variables;
nothing here calls back into the class)."""
from __future__ import absolute_import, division, print_function

import numbers

from gradacc_compat import compat
from gradacc_compat.core import families
from gradacc_compat.core.checks import names
from gradacc_compat.compat import tf

__all__ = ["MAX_GUARDED", "MIXED_NONE", "TF1_COLLECTIVES", "check_not_wrapped", "gated",
           "is_default", "is_python", "cond", "scatter", "clear", "clear_marked", "transformed",
           "total", "all_reduce_sum", "local_sum", "where", "read", "zeros", "accum_dtype"]

#: Variables whose presence in a cycle a graph decides by tf.cond, at most:
#: one branch (one apply) per subset of them.
MAX_GUARDED = 3
MIXED_NONE = (
    "%d variables may get no gradient in a cycle (more than %d: %s): in a graph or "
    "tf.function the apply leaves them all out when none of them got one, and passes "
    "all of them otherwise, zeros for those that got none (an optimizer with momentum "
    "then still moves those). Eagerly, and for up to %d such variables, only the ones "
    "without a gradient are left out.")


TF1_COLLECTIVES = (
    "GradientAccumulator.step (and a Keras optimizer from gac.wrap, which uses it) "
    "received a micro-step under %s across workers in a TF 1.x graph. There the apply "
    "would sit in every micro-step's session run, in a tf.cond around the all-reduce, "
    "which TF 1.x's collective ops fail now and then ('Delete called on non-empty "
    "BufRendezvous'). Split the two halves: build the micro-step with "
    "acc.accumulate(grads, variables) in the replica function and the apply with "
    "acc.apply_gradients(optimizer) under strategy.scope(), and run the apply op in "
    "its own session.run after every N micro-step runs; or use gac.wrap on a "
    "tf.compat.v1.train optimizer, whose minimize splits them itself (add "
    "optimizer.make_session_run_hook() to the training hooks). See the README, "
    "'TF 1.x collectives'.")


# ---------------------------------------------------------------- helpers
def check_not_wrapped(optimizer, what, own_steps):
    steps = families.accumulating_steps(optimizer)
    if steps is not None:
        raise TypeError(
            "GradientAccumulator(steps=%d).%s received a gac.wrap(..., steps=%d) optimizer, "
            "which accumulates itself: the two would nest into cycles of %d x %d "
            "micro-batches. Pass the optimizer you wrapped (wrapper.inner_optimizer for a "
            "tf.compat.v1.train one), or drop the accumulator and call the wrapper's "
            "apply_gradients every micro-batch." % (own_steps, what, steps, own_steps, steps))


def gated(grad):
    """``grad`` through an identity made under the caller's control
    dependencies (``None`` stays None)."""
    if grad is None:
        return None
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(tf.identity(grad.values), tf.identity(grad.indices),
                                grad.dense_shape)
    return tf.identity(grad)


def is_default(strategy):
    return not tf.distribute.has_strategy() and strategy is tf.distribute.get_strategy()


def is_python(value):
    return isinstance(value, (bool, numbers.Number))


def cond(pred, true_fn, false_fn=None):
    """``tf.cond`` over stateful branches, true when ``true_fn`` ran; its
    output carries the branch's ops (graph mode prunes stateful ops that
    nothing downstream depends on)."""
    if tf.executing_eagerly():
        ran = bool(pred)
        (true_fn if ran else (false_fn or tf.no_op))()
        return tf.constant(ran)

    def branch(fn, value):
        def run():
            op = fn() if fn is not None else None
            with tf.control_dependencies([op] if op is not None else []):
                return tf.identity(tf.constant(value))
        return run

    # The branches may create variables under init_scope (an optimizer's
    # slots): it must lift them to this graph, never to eager mode.
    with compat.graph_entered():
        return tf.cond(pred, branch(true_fn, True), branch(false_fn, False))


def scatter(accum, rows, grad, weight, first):
    """Adds ``grad`` (``IndexedSlices``) to ``accum`` and marks its rows in
    ``rows``; on a cycle's first micro-batch, after clearing the last cycle's
    rows, or without marks (``rows`` None) the whole accumulator (a zero fill
    and a scatter cost less than ``unsorted_segment_sum`` and an assign)."""
    values = tf.cast(grad.values, accum.dtype)
    if weight is not None:
        values = values * weight
    with tf.control_dependencies(clear(accum, rows) if first else []):
        writes = [tf.compat.v1.scatter_add(accum, grad.indices, values)]
        if rows is not None:
            writes.append(tf.compat.v1.scatter_update(
                rows, grad.indices, tf.ones(tf.shape(grad.indices), tf.float32)))
        return writes


def clear(accum, rows):
    """Empties ``accum`` for a new cycle: the rows ``rows`` marks, or the
    whole accumulator where it keeps no marks (``rows`` None)."""
    if rows is None:
        return [accum.assign(zeros(accum), read_value=False)]
    return clear_marked(accum, rows)


def clear_marked(accum, rows):
    """Zeroes the rows of ``accum`` that ``rows`` marks, and the marks."""
    marked = tf.reshape(tf.where(rows.read_value() > 0), [-1])
    count = tf.shape(marked)[:1]
    shape = tf.concat([count, tf.shape(accum, out_type=tf.int32)[1:]], 0)
    return [tf.compat.v1.scatter_update(accum, marked, tf.zeros(shape, accum.dtype)),
            tf.compat.v1.scatter_update(rows, marked, tf.zeros(count, tf.float32))]


def transformed(transform, grads, variables, replicas):
    """``transform`` on the global accumulated gradient (replica context):
    across replicas their sum, all-reduced here, and each replica hands the
    optimizer 1/replicas of the result (its own all-reduce sums them)."""
    if replicas > 1:
        dense = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g
                 for g in grads]
        grads = all_reduce_sum(dense)
    pairs = list(transform(list(zip(grads, variables))))
    if len(pairs) != len(variables) or any(
            v is not w for (_, v), w in zip(pairs, variables)):
        raise ValueError(
            "GradientAccumulator's transform must return the (gradient, variable) pairs it "
            "received, in the same order (%d pairs, %s); it returned %d pairs."
            % (len(variables), names(variables), len(pairs)))
    out = [g for g, _ in pairs]
    if replicas > 1:
        out = [g / float(replicas) for g in out]
    return out


def total(strategy, variable):
    """The sum over every replica of a replica-local (SUM) variable. On one
    worker its components, each read where it is (no collective op); across
    workers the aggregated read, one scalar all-reduce (the other workers'
    components are not here)."""
    if compat.spans_workers(strategy):
        return tf.identity(variable.read_value())
    return local_sum(strategy, variable)


def all_reduce_sum(values):
    """The replicas' sum of each of ``values`` (replica context), back in
    every replica. (``ReplicaContext.all_reduce`` on TF 1.15 graphs looks
    its inputs' variables up by name, which replica-local ones are not:
    the merge it is made of, without that.)"""
    def merge(strategy, *per_replica):
        return strategy.extended.batch_reduce_to(
            tf.distribute.ReduceOp.SUM, [(v, v) for v in per_replica])
    return list(tf.distribute.get_replica_context().merge_call(merge, args=tuple(values)))


def local_sum(strategy, variable):
    """The sum of a replica-local variable's components, each read on its
    own device: no collective op (cross-replica context)."""
    parts = [read(p) for p in compat.local_results(strategy, variable)]
    return tf.add_n(parts) if len(parts) > 1 else tf.identity(parts[0])


def where(pred, value):
    """``value`` where the scalar ``pred`` holds, else its zeros."""
    if tf.executing_eagerly():
        return value if bool(pred) else tf.zeros_like(value)
    return tf.cond(pred, lambda: tf.identity(value), lambda: tf.zeros_like(value))


def read(variable):
    """The variable's value: eagerly a plain read (``read_value`` adds an
    identity op there, ~60 us a variable on TF 1.14)."""
    return variable.value() if tf.executing_eagerly() else variable.read_value()


def zeros(variable):
    shape = tf.TensorShape(variable.shape)
    if shape.is_fully_defined():
        return tf.zeros(shape, variable.dtype.base_dtype)
    return tf.zeros_like(variable.read_value())


def accum_dtype(variable):
    dtype = tf.as_dtype(variable.dtype).base_dtype
    # float16/bfloat16 sums lose precision: accumulate in float32.
    if dtype in (tf.float16, tf.bfloat16):
        return tf.float32
    return dtype
