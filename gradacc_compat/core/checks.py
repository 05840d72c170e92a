"""Input validation: every check runs before any state changes, and every
error says what was received and what to do."""
from __future__ import absolute_import, division, print_function

import numbers
import re

import six

from gradacc_compat.compat import tf

#: The largest ``steps`` accepted: far beyond any real cycle, far from int64's end.
MAX_STEPS = 2 ** 31 - 1

__all__ = ["MAX_STEPS", "NONFINITE", "check_nonfinite", "check_transform", "finite_checked", "check_reduction", "check_sequence", "check_steps", "check_gradient", "check_weight", "runtime_checks", "clean_name", "names"]


def check_steps(steps):
    """``steps`` as an int >= 1, or a ``TypeError``/``ValueError`` saying why."""
    if isinstance(steps, bool) or not isinstance(steps, (numbers.Integral,)):
        raise TypeError(
            "`steps` must be an integer >= 1 (the number of micro-batches per "
            "applied update). Received: steps=%r (type %s)." % (steps, type(steps).__name__))
    if steps < 1:
        raise ValueError("`steps` must be an integer >= 1 (1 applies every call). "
                         "Received: steps=%r." % (steps,))
    if steps > MAX_STEPS:
        raise ValueError("`steps` must be at most %d (2**31 - 1; the micro-step counter "
                         "is an int64 that a tf.function compares with it). Received: "
                         "steps=%r." % (MAX_STEPS, steps))
    return int(steps)


def check_reduction(reduction):
    """``reduction`` if it is "mean" or "sum", else a ``ValueError``."""
    if reduction not in ("mean", "sum"):
        raise ValueError('`reduction` must be "mean" or "sum". Received: reduction=%r.'
                         % (reduction,))
    return reduction


#: What ``nonfinite=`` accepts: what a cycle with an inf/NaN gradient does.
NONFINITE = ("apply", "skip", "raise")


def check_nonfinite(nonfinite):
    """``nonfinite`` if it is one of :data:`NONFINITE`, else a ``ValueError``."""
    if nonfinite not in NONFINITE:
        raise ValueError('`nonfinite` must be "apply" (what the big batch does), "skip" (drop '
                         'the cycle) or "raise" (refuse the micro-batch). Received: '
                         'nonfinite=%r.' % (nonfinite,))
    return nonfinite


def finite_checked(gradients, variables):
    """``(gradients, checks)``: each gradient through ``tf.debugging.
    check_numerics`` (eagerly it raises ``InvalidArgumentError`` at once;
    in a graph the caller makes the writes wait for the checks)."""
    checks, out = [], []
    for grad, variable in zip(gradients, variables):
        if grad is None:
            out.append(None)
            continue
        sparse = isinstance(grad, tf.IndexedSlices)
        values = grad.values if sparse else grad
        if not tf.as_dtype(values.dtype).is_floating:
            out.append(grad)
            continue
        checked = tf.debugging.check_numerics(
            values, "gradacc_compat: nonfinite='raise': the gradient for variable %s holds "
                    "inf or NaN; nothing was accumulated" % (clean_name(variable),))
        if not tf.executing_eagerly():
            checks.append(checked.op)
        out.append(tf.IndexedSlices(checked, grad.indices, grad.dense_shape) if sparse
                   else checked)
    return out, checks


def check_transform(transform, clip_global_norm):
    """The transform the accumulator runs on the accumulated gradient:
    ``transform``, or one clipping by ``clip_global_norm``; a ``TypeError``
    or ``ValueError`` for anything else (both given, not callable, a norm
    that is not a positive number)."""
    if transform is not None and clip_global_norm is not None:
        raise ValueError("Pass `transform` or `clip_global_norm`, not both (clip inside your "
                         "transform with tf.clip_by_global_norm). Received: transform=%r, "
                         "clip_global_norm=%r." % (transform, clip_global_norm))
    if transform is not None:
        if not callable(transform):
            raise TypeError("`transform` must be a function of the (gradient, variable) pairs "
                            "returning the pairs. Received: transform=%r." % (transform,))
        return transform
    if clip_global_norm is None:
        return None
    if isinstance(clip_global_norm, bool) or not isinstance(clip_global_norm, numbers.Real) \
            or not clip_global_norm > 0:
        raise ValueError("`clip_global_norm` must be a number > 0 (the global norm to clip "
                         "the accumulated gradient to). Received: clip_global_norm=%r."
                         % (clip_global_norm,))
    norm = float(clip_global_norm)

    def clip(grads_and_vars):
        grads, variables = zip(*grads_and_vars)
        clipped, _ = tf.clip_by_global_norm(list(grads), norm)
        return list(zip(clipped, variables))
    return clip


def check_sequence(value, what, example):
    """``value`` as a list; a single tensor/variable/array (not a list of
    them) is refused, saying a list was expected."""
    if isinstance(value, (tf.Tensor, tf.IndexedSlices, tf.Variable)) or \
            type(value).__module__ == "numpy" or hasattr(value, "assign"):
        raise TypeError(
            "`%s` must be a list with one entry per variable; received a single %s%s. "
            "Pass a list, e.g. %s." % (what, type(value).__name__, _shape_of(value), example))
    try:
        return list(value)
    except TypeError:
        raise TypeError("`%s` must be a list with one entry per variable; received %r "
                        "(type %s)." % (what, value, type(value).__name__))


def _shape_of(value):
    shape = getattr(value, "shape", None)
    return "" if shape is None else " of shape %s" % (tf.TensorShape(shape),)


def clean_name(variable):
    name = getattr(variable, "path", None) or getattr(variable, "name", None) or "var"
    name = six.ensure_str(name).split(":")[0]
    return re.sub(r"[^A-Za-z0-9_.\-/]", "_", name) or "var"


def names(variables):
    shown = [clean_name(v) for v in variables[:4]]
    return ", ".join(shown) + (", ..." if len(variables) > 4 else "")


def check_gradient(grad, variable):
    if grad is None:
        return None
    var_shape = tf.TensorShape(variable.shape)
    if isinstance(grad, tf.IndexedSlices):
        shape = tf.TensorShape(grad.values.shape)[1:]
        if not shape.is_compatible_with(var_shape[1:]):
            raise ValueError(
                "Gradient for variable %s is an IndexedSlices with rows of shape %s; "
                "the variable has shape %s." % (clean_name(variable), shape, var_shape))
        return grad
    try:
        if not isinstance(grad, tf.Tensor):
            grad = tf.convert_to_tensor(grad)
    except (TypeError, ValueError) as err:
        raise TypeError("Gradient for variable %s must be a tensor, tf.IndexedSlices or "
                        "None; received %r (%s)." % (clean_name(variable), grad, err))
    dtype = tf.as_dtype(grad.dtype)
    if not (dtype.is_floating or dtype.is_complex or dtype.is_integer):
        raise TypeError("Gradient for variable %s must be a numeric tensor (the variable "
                        "is %s); received a %s tensor. Pass the gradients the tape or "
                        "tf.gradients returned." % (clean_name(variable),
                                                   tf.as_dtype(variable.dtype).base_dtype.name,
                                                   dtype.name))
    if not grad.shape.is_compatible_with(var_shape):
        raise ValueError("Gradient for variable %s has shape %s; the variable has shape %s. "
                         "Are the gradients in the same order as the variables?"
                         % (clean_name(variable), grad.shape, var_shape))
    return grad


def runtime_checks(gradients, variables, weight):
    """Graph and ``tf.function``: ``(gradients, checks)`` for what only the
    run knows -- a gradient's dimensions left unknown when it was built, a
    tensor ``weight``'s value. Such a gradient comes back through
    ``tf.ensure_shape`` (so every write sees its static shape and only the
    check can fail at run time); the caller makes the writes wait for the
    checks, so a failing one leaves the state as it was. Eagerly everything
    is known and checked already: ``(gradients, [])``."""
    if tf.executing_eagerly():
        return gradients, []
    checks, out = [], []
    for grad, variable in zip(gradients, variables):
        out.append(grad)
        if grad is None:
            continue
        sparse = isinstance(grad, tf.IndexedSlices)
        values = grad.values if sparse else grad
        var_shape = tf.TensorShape(variable.shape)
        want = tf.TensorShape([None]).concatenate(var_shape[1:]) if sparse else var_shape
        if tf.TensorShape(values.shape).is_fully_defined() or var_shape.rank is None:
            continue
        # The scope names the variable in TF's error ("Shape of tensor
        # gradient_of_<variable>/EnsureShape:0 [5] is not compatible ...").
        with tf.name_scope("gradient_of_" + clean_name(variable).replace("/", "_")):
            ensured = tf.ensure_shape(values, want)
        checks.append(ensured.op)
        out[-1] = tf.IndexedSlices(ensured, grad.indices, grad.dense_shape) if sparse else ensured
    if weight is not None and not _static_weight(weight):
        checks.append(tf.debugging.Assert(
            tf.logical_and(tf.greater_equal(weight, 0.0), tf.less(weight, float("inf"))),
            ["`weight` must be a finite number >= 0 (examples or tokens in this "
             "micro-batch); nothing was accumulated. Received weight:", weight]))
    return out, checks


def _static_weight(weight):
    """Whether ``weight`` is a constant check_weight made (checked then)."""
    return getattr(getattr(weight, "op", None), "type", None) == "Const"


def check_weight(weight):
    if weight is None:
        return None
    if isinstance(weight, bool) or isinstance(weight, six.string_types + (bytes,)):
        raise TypeError("`weight` must be a number of examples (>= 0), not a bool or a "
                        "string. Received: weight=%r." % (weight,))
    if isinstance(weight, numbers.Number) or type(weight).__module__ == "numpy":
        value = float(weight)
        if not value >= 0.0 or value == float("inf"):
            raise ValueError("`weight` must be a finite number >= 0 (examples or tokens "
                             "in this micro-batch). Received: weight=%r." % (weight,))
        return tf.constant(value, tf.float32)
    try:
        tensor = tf.convert_to_tensor(weight)
    except (TypeError, ValueError):
        raise TypeError("`weight` must be a number or a scalar tensor. Received: weight=%r "
                        "(type %s)." % (weight, type(weight).__name__))
    if tensor.shape.ndims not in (None, 0) or not (tensor.dtype.is_floating or tensor.dtype.is_integer):
        raise ValueError("`weight` must be a numeric scalar. Received a tensor of shape %s "
                         "and dtype %s." % (tensor.shape, tensor.dtype.name))
    tensor = tf.cast(tensor, tf.float32)
    if tf.executing_eagerly():
        value = float(tensor.numpy())
        if not value >= 0.0 or value == float("inf"):
            raise ValueError("`weight` must be a finite number >= 0 (examples or tokens "
                             "in this micro-batch). Received a tensor weight of value %r."
                             % (value,))
    return tensor
