"""The number of examples in the micro-batch Keras ``fit`` is training.

A wrapped Keras optimizer receives gradients, not the batch, yet the big
batch weights every example alike: a short last batch (10 examples in
batches of 3: 3, 3, 3, 1) must count for what it holds, not for a quarter
of the cycle. Keras' loss is the mean over the micro-batch (under a
strategy, each replica's mean divided by the replica count), so weighting
each micro-step's gradient by its example count makes the cycle's weighted
mean the big batch's mean, on one device and across replicas.

The count is read from the caller that holds the batch: Keras'
``train_step(self, data)`` (TF 2.2+, Keras 3, a user's override that keeps
the argument's name), TF 2.0/2.1's ``_process_single_batch(model, inputs,
...)``, and the TF 1.x graph ``fit``'s model inputs. Where none is found
under ``fit``, :func:`example_count` says so (a one-time warning by the
caller); outside ``fit`` (a custom loop calling ``apply_gradients``) it is
None and every micro-step counts alike.
"""
from __future__ import absolute_import, division, print_function

import sys

from gradacc_compat.compat import tf

__all__ = ["example_count"]

#: How far up the stack to look (fit -> train_function -> train_step ->
#: minimize -> apply_gradients -> the wrapper -> here).
_FRAMES = 40
#: (function name, local holding the batch) for the callers that hold it.
_HOLDERS = (("train_step", "data"), ("_process_single_batch", "inputs"))
#: Functions whose presence on the stack means Keras fit/train_on_batch.
_FIT = ("fit", "train_on_batch", "_make_train_function", "make_train_function",
        "train_function", "fit_loop", "model_iteration")


def example_count():
    """``(count, under_fit)``: the micro-batch's example count as a float32
    scalar tensor (None when not found), and whether Keras fit called."""
    under_fit = False
    frame = sys._getframe(2)
    for _ in range(_FRAMES):
        if frame is None:
            break
        name = frame.f_code.co_name
        for holder, local in _HOLDERS:
            if name == holder and local in frame.f_locals:
                count = _leading_dim(frame.f_locals[local])
                if count is not None:
                    return count, True
        if name in _FIT:
            under_fit = True
            model = frame.f_locals.get("self")
            count = _leading_dim(getattr(model, "inputs", None)) if _graph_model(model) else None
            if count is not None:
                return count, True
        frame = frame.f_back
    return None, under_fit


def _graph_model(model):
    """A Keras model whose inputs are this (TF1) graph's placeholders."""
    return (model is not None and hasattr(type(model), "layers")
            and not tf.executing_eagerly() and bool(getattr(model, "inputs", None)))


def _leading_dim(data):
    """The first dimension of the first tensor in ``data`` (a nest), as a
    float32 scalar in the current graph; None when there is none."""
    try:
        flat = tf.nest.flatten(data)
    except (TypeError, ValueError):
        return None
    for item in flat:
        if item is None or isinstance(item, (str, bytes, int, float)):
            continue
        if not tf.executing_eagerly() and \
                getattr(item, "graph", None) is not tf.compat.v1.get_default_graph():
            continue  # a tensor of another graph (or a NumPy array)
        if hasattr(item, "nrows"):  # tf.RaggedTensor
            rows = item.nrows()
        elif isinstance(item, tf.SparseTensor):
            rows = item.dense_shape[0]
        elif hasattr(item, "shape") and hasattr(item, "dtype"):
            if tf.TensorShape(item.shape).rank == 0:
                continue
            rows = tf.shape(item)[0]
        else:
            continue
        return tf.cast(rows, tf.float32)
    return None
