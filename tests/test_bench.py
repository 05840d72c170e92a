"""The benchmark's quick mode runs on this TF (a smoke test: no times are
asserted, only that it runs and that accumulation reduces once per cycle)."""
from __future__ import absolute_import, division, print_function

import os
import re
import subprocess
import sys

import six

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks", "bench.py")


def test_quick_benchmark_runs_and_reduces_once_per_effective_step():
    proc = subprocess.Popen([sys.executable, BENCH, "--quick"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    text = six.ensure_str(out)
    assert proc.returncode == 0, (text, six.ensure_str(err)[-3000:])
    for label in ("one device, accumulate", "MirroredStrategy x2 CPUs, accumulate"):
        assert label in text
    ratio = re.search(r"plain (\S+), accumulate (\S+) \(ratio (\S+); 1/steps = 0.500", text)
    assert ratio, text
    assert float(ratio.group(1)) > 0 and ratio.group(3) == "0.500", text
