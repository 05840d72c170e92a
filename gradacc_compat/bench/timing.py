"""Timing that a noisy, shared machine cannot fool: every candidate runs a
short block in turn, many rounds over, so load and drift hit all alike;
each round's ratios are paired (same moment), and medians with their
spread are what is reported."""
from __future__ import absolute_import, division, print_function

import time

import numpy as np

__all__ = ["alternate", "spread", "paired", "median_interval", "resolved", "until_resolved"]


def alternate(candidates, steps, rounds, cycles, samples=None):
    """``{name: [ms per micro-step, one per round]}``: each round runs
    ``cycles`` effective steps of every candidate, the order rotated each
    round so that none always follows the same one. Given ``samples``, the
    rounds are added to them."""
    if samples is None:
        samples = dict((c.name, []) for c in candidates)
    order = list(candidates)
    order = order[len(samples[order[0].name]) % len(order):] + \
        order[:len(samples[order[0].name]) % len(order)]
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


def median_interval(values, level=0.95, draws=2000, seed=0):
    """``(median, low, high)``: the median and a bootstrap ``level``
    confidence interval for it (percentile method, ``draws`` resamples)."""
    values = np.asarray(values, dtype=float)
    rng = np.random.RandomState(seed)
    medians = np.median(values[rng.randint(0, len(values), (draws, len(values)))], axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    return (float(np.median(values)), float(np.percentile(medians, tail)),
            float(np.percentile(medians, 100.0 - tail)))


def resolved(interval, width):
    """Whether ``(median, low, high)`` is within +-``width`` of its median
    (a fraction of it)."""
    median, low, high = interval
    return (high - low) / 2.0 <= width * abs(median)


def until_resolved(candidates, steps, cycles, pairs, width, seconds, first=20, more=10):
    """Alternating rounds (``first``, then ``more`` at a time) until every
    ``(name, other)`` pair's speed ratio ``other/name`` has a 95% interval
    within +-``width`` of its median (:func:`resolved`), or ``seconds`` have
    passed.
    Returns ``(samples, {pair: (median, low, high)}, seconds spent)``."""
    start = time.time()
    samples = alternate(candidates, steps, first, cycles)
    while True:
        found = dict((pair, median_interval(np.asarray(samples[pair[1]], float)
                                            / np.asarray(samples[pair[0]], float)))
                     for pair in pairs)
        wide = [p for p, interval in found.items() if not resolved(interval, width)]
        spent = time.time() - start
        if not wide or spent >= seconds:
            return samples, found, spent
        alternate(candidates, steps, more, cycles, samples)
