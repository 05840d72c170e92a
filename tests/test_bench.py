"""The benchmark's quick mode runs on this TF (a smoke test: no times are
asserted; what is checked is what the run computes, not how fast)."""
from __future__ import absolute_import, division, print_function

import json
import os
import subprocess
import sys
import tempfile

import six

from gradacc_compat.bench import runner

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def test_quick_benchmark_reports_every_section_and_reduces_once_per_effective_step():
    out_json = os.path.join(tempfile.mkdtemp(), "bench.json")
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.Popen([sys.executable, "-m", "gradacc_compat.bench", "--quick",
                             "--json", out_json], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    text = six.ensure_str(proc.communicate()[0])
    assert proc.returncode == 0, text[-5000:]
    with open(out_json) as f:
        results = json.load(f)
    sections = dict((s["title"].split(",")[0], s) for s in results["sections"])
    assert set(sections) >= {"tiny", "targets", "eager overhead", "MirroredStrategy"}, \
        text[-3000:]
    # The targets' comparisons, each a median inside its 95% interval.
    pairs = dict(((p["name"], p["other"]), p) for p in sections["targets"]["intervals"])
    assert ("gac tf.function", "floor+write") in pairs, sorted(pairs)
    assert ("gac tf.function", "reduce-every-micro-step") in pairs, sorted(pairs)
    assert ("gac host-counted", "reduce-every-micro-step") in pairs, sorted(pairs)
    # ... which are shown beside the targets, not held to them.
    shown = [line for line in results["targets"] if "gac host-counted /" in line["text"]]
    assert len(shown) == 2 and all(line["met"] is None for line in shown), shown
    assert ("gac eager", "eager floor+write") in dict(
        ((p["name"], p["other"]), p) for p in sections["eager overhead"]["intervals"])
    for pair in pairs.values():
        low, high = pair["speed"][1], pair["speed"][2]
        assert low <= pair["speed"][0] <= high and pair["rounds"] >= results["rounds"], pair
    rows = dict((r["name"], r) for r in sections["tiny"]["rows"])
    for name in ("plain(b)", "big(N*b)", "floor", "floor+write", "gac tf.function",
                 "gac host-counted", "gac eager", "reduce-every-micro-step", "fit plain(b)",
                 "fit gac.wrap"):
        assert name in rows, (name, sorted(rows))
        assert len(sections["tiny"]["samples"][name]) == results["rounds"]
    # Every accumulating candidate of ours equals the big batch, advances its
    # optimizer once per effective step, and nothing retraces. (Alternatives
    # are shown, not held to it: Horovod's backward_passes_per_step counts
    # iterations per micro-step, so its Adam is off the big batch.)
    for name, row in rows.items():
        if row["max_dw"] is not None and runner.is_ours(name):
            assert row["max_dw"] <= 1e-5, (name, row["max_dw"])
    assert rows["fit gac.wrap"]["iterations_per_effective_step"] == 1, rows["fit gac.wrap"]
    if rows["gac tf.function"]["iterations_per_effective_step"] is not None:  # v1: none
        assert rows["gac tf.function"]["iterations_per_effective_step"] == 1
    if "fit horovod bpps" in rows:
        assert rows["fit horovod bpps"]["iterations_per_effective_step"] == results["steps"]
    assert rows["gac tf.function"]["retraces"] == rows["gac host-counted"]["retraces"] == 0
    assert rows["gac host-counted"]["max_dw"] <= 1e-5, rows["gac host-counted"]
    # Fit rows' speeds are relative to fit plain(b), loop rows' to plain(b).
    assert rows["fit plain(b)"]["speed"] == [1.0, 1.0, 1.0]
    assert rows["plain(b)"]["speed"] == [1.0, 1.0, 1.0]
    # Under MirroredStrategy: one all-reduce per effective step carrying the
    # big batch's bytes; the tutorial pattern reduces every micro-step.
    mirrored = dict((r["name"], r) for r in sections["MirroredStrategy"]["rows"])
    acc, big = mirrored["gac tf.function"], mirrored["big(N*b)"]
    assert acc["reductions_per_effective_step"] == 1, acc
    assert acc["bytes_per_effective_step"] == big["bytes_per_effective_step"] > 0
    assert mirrored["reduce-every-micro-step"]["reductions_per_effective_step"] > 1
    # Each memory configuration ran in 2 fresh processes; its peak is theirs.
    for run in results["memory"]["runs"]:
        assert len(run["peak_rss_samples"]) == 2 and run["peak_rss"] in run["peak_rss_samples"], run
    assert "## targets" in text
