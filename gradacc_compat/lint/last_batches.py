"""Tests that apply at the epoch's last batch too: ``(step + 1) % N == 0
or step + 1 == len(dataset)`` flushes the partial cycle where the batches
end, so no micro-batch is carried into the next epoch or dropped.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import dotted_name, last, nodes_in
from gradacc_compat.lint.exprs import conjuncts, counted, counts_epochs, mod_parts, modulo_tested

__all__ = ["last_batch"]

_LAST_WORDS = ("len", "per_epoch", "num_batches", "n_batches", "total_batches", "last")


def last_batch(test):
    """An ``or`` whose one side tests for the epoch's last batch:
    ``(step + 1) % N == 0 or step + 1 == len(dataset)`` (``steps_per_epoch``,
    ``num_batches``), or a name for it (``is_last_batch``): the partial cycle
    is applied there, at the epoch's end (also where that side is an
    ``and``: ``step % steps_per_epoch == 0 and not by_steps``)."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or)):
        return False
    if _counter_reaches(test):
        return True
    for part in (p for v in test.values for p in conjuncts(v)):
        if isinstance(part, ast.Name) and "last" in part.id.lower():
            return True  # (``is_last_batch = batch_idx == batches_per_epoch``)
        if isinstance(part, ast.Compare) and any(isinstance(o, (ast.Eq, ast.GtE))
                                                 for o in part.ops):
            words = " ".join((dotted_name(n) or "") + " " + (dotted_name(getattr(n, "func", None))
                                                             or "") for n in nodes_in(part))
            if any(w in words.lower() for w in _LAST_WORDS):
                return True
    return False


def _counter_reaches(test):
    """One side of the ``or`` is the cycle's test and another compares the
    same counter for equality with a count of another name (not N, not a
    number, not the number of epochs: GAC109's): ``(step + 1) % N == 0 or
    (step + 1) == num_steps``, the point where the batches end."""
    cycles = [mod_parts(modulo_tested(v)) for v in test.values if modulo_tested(v) is not None]
    for counter, n in (c for c in cycles if c is not None):
        for side in test.values:
            if not (isinstance(side, ast.Compare) and len(side.ops) == 1
                    and isinstance(side.ops[0], ast.Eq)):
                continue
            left, right = counted(side.left), side.comparators[0]
            count = last(dotted_name(right))
            if dotted_name(left) and dotted_name(left) == dotted_name(counter) and count \
                    and count != last(dotted_name(n)) and not counts_epochs(right):
                return True
    return False
