"""Timing that a noisy, shared machine cannot fool: every candidate runs a
short block in turn, many rounds over, so load and drift hit all alike;
each round's ratios are paired (same moment), and medians with their
spread are what is reported."""
from __future__ import absolute_import, division, print_function

import time

import numpy as np

__all__ = ["alternate", "spread", "paired"]


def alternate(candidates, steps, rounds, cycles):
    """``{name: [ms per micro-step, one per round]}``: each round runs
    ``cycles`` effective steps of every candidate, the order rotated each
    round so that none always follows the same one."""
    samples = dict((c.name, []) for c in candidates)
    order = list(candidates)
    for _ in range(rounds):
        for c in order:
            start = time.time()
            c.block(cycles)
            samples[c.name].append((time.time() - start) / (cycles * steps) * 1e3)
        order = order[1:] + order[:1]
    return samples


def spread(values):
    """``(median, first quartile, third quartile)``."""
    values = np.asarray(values, dtype=float)
    return (float(np.median(values)), float(np.percentile(values, 25)),
            float(np.percentile(values, 75)))


def paired(numerator, denominator):
    """Per-round ratios ``numerator[r] / denominator[r]``, as :func:`spread`."""
    return spread(np.asarray(numerator, float) / np.asarray(denominator, float))
