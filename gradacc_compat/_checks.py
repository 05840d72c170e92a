"""Input validation: every check runs before any state changes, and every
error says what was received and what to do."""
from __future__ import absolute_import, division, print_function

import numbers
import re

import six

from gradacc_compat.compat import tf

#: The largest ``steps`` accepted: far beyond any real cycle, far from int64's end.
MAX_STEPS = 2 ** 31 - 1

__all__ = ["MAX_STEPS", "check_steps", "check_gradient", "check_weight", "clean_name", "names"]


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
    if not grad.shape.is_compatible_with(var_shape):
        raise ValueError("Gradient for variable %s has shape %s; the variable has shape %s. "
                         "Are the gradients in the same order as the variables?"
                         % (clean_name(variable), grad.shape, var_shape))
    return grad


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
    return tf.cast(tensor, tf.float32)
