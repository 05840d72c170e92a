"""Memory: each configuration trains in a fresh child process, which
reports its peaks; the same children under one address-space cap
(``resource.setrlimit``) show the big batch failing where accumulation fits."""
from __future__ import absolute_import, division, print_function

import json
import os
import subprocess
import sys

import six

__all__ = ["MODES", "child", "measure", "summary"]

TAG = "GAC-BENCH-MEMORY "
#: (mode, what it trains): the configurations compared.
MODES = (("plain(b)", "an update per micro-batch of b"),
         ("accumulate(N,b)", "GradientAccumulator, N micro-batches of b"),
         ("plain(N*b)", "an update per batch of N*b"))


def _status(field):
    """A ``/proc/self/status`` field in bytes (Linux), or None."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (IOError, OSError, ValueError):
        return None
    return None


def child(workload, mode, steps, batch):
    """In the child process: train 2 effective steps of ``mode`` in a
    tf.function and print the peaks as one tagged JSON line."""
    from gradacc_compat.bench import candidates
    from gradacc_compat.compat import tf
    s = candidates.Setting(workload, steps, batch)
    make = {"plain(b)": candidates.plain, "accumulate(N,b)": candidates.accumulator,
            "plain(N*b)": candidates.big}[mode]
    c = make(s)
    c.block(2)
    allocator = None
    try:  # TF reports allocator peaks for GPUs (2.5+), not for the CPU
        if tf.config.list_logical_devices("GPU"):
            allocator = tf.config.experimental.get_memory_info("GPU:0")["peak"]
    except (AttributeError, ValueError):
        pass
    parameters = sum(int(v.shape.num_elements()) * tf.as_dtype(v.dtype).size
                     for v in c.model.trainable_variables)
    print(TAG + json.dumps({"mode": mode, "peak_rss": _status("VmHWM"),
                            "peak_virtual": _status("VmPeak"), "allocator_peak": allocator,
                            "parameter_bytes": parameters}))
    sys.stdout.flush()


def measure(workload, mode, steps, batch, cap=None, timeout=900):
    """Runs :func:`child` in a fresh process (under an address-space cap of
    ``cap`` bytes when given). Returns its report, or ``{"failed": why}``."""
    argv = [sys.executable, "-m", "gradacc_compat.bench", "--child-memory", mode,
            "--workloads", workload.name, "--steps", str(steps), "--batch", str(batch)]
    # glibc hands blocks of 64 KiB and more back to the system when freed
    # (mmap), so a peak RSS counts live tensors, not what a heap kept.
    env = dict(os.environ, MALLOC_ARENA_MAX="2", MALLOC_MMAP_THRESHOLD_="65536",
               TF_CPP_MIN_LOG_LEVEL="2",
               PYTHONPATH=os.pathsep.join([_root()] + [p for p in [os.environ.get(
                   "PYTHONPATH")] if p]))

    def limit():
        if cap:
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (int(cap), int(cap)))

    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            preexec_fn=limit)
    try:
        out = _communicate(proc, timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for line in out.splitlines():
        if line.startswith(TAG):
            return json.loads(line[len(TAG):])
    lines = [l for l in out.splitlines() if l.strip()]
    why = next((l for l in reversed(lines) if "OOM" in l or "MemoryError" in l
                or "ResourceExhausted" in l or "bad_alloc" in l), None)
    return {"mode": mode, "failed": (why or (lines[-1] if lines else "no output"))[:300],
            "out_of_memory": why is not None, "returncode": proc.returncode}


def summary(reports):
    """One mode's reports from several processes as one: the median of each
    peak (``peak_rss_samples`` lists them all), or the first failure."""
    failed = [r for r in reports if r.get("failed")]
    if failed:
        return failed[0]
    merged = dict(reports[0])
    for key in ("peak_rss", "peak_virtual", "allocator_peak"):
        values = sorted(r[key] for r in reports if r.get(key) is not None)
        merged[key] = values[len(values) // 2] if values else None
    merged["peak_rss_samples"] = [r.get("peak_rss") for r in reports]
    return merged


def _communicate(proc, timeout):
    if six.PY2:  # no timeout argument: the child has its own small budget
        return six.ensure_str(proc.communicate()[0])
    try:
        return six.ensure_str(proc.communicate(timeout=timeout)[0])
    except subprocess.TimeoutExpired:
        proc.kill()
        return six.ensure_str(proc.communicate()[0]) + "\ntimed out"


def _root():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
