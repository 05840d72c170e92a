"""The benchmark's sections, run in order, and the targets read from them."""
from __future__ import absolute_import, division, print_function

import sys

import numpy as np

from gradacc_compat import compat
from gradacc_compat.bench import candidates, memory, report, suites, timing, workloads
from gradacc_compat.compat import tf

__all__ = ["setup_devices", "run", "memory_child"]


def setup_devices(cpus):
    """Two logical CPUs for the MirroredStrategy section (before any op);
    TF 1.x runs eagerly."""
    if compat.TF1:
        tf.compat.v1.enable_eager_execution(config=compat.tf1_session_config(cpus))
    elif cpus > 1:
        compat.split_cpu(cpus)
    tf.get_logger().setLevel("ERROR")


def memory_child(args):
    memory.child(workloads.get(args.workloads), args.child_memory, args.steps, args.batch)
    return 0


def run(args):
    skip = set(filter(None, args.skip.split(",")))
    results = {"tf": compat.TF_VERSION_STRING, "python": sys.version.split()[0],
               "keras": compat.KERAS_VERSION, "steps": args.steps, "batch": args.batch,
               "rounds": args.rounds, "cycles": args.cycles, "resolution": args.resolution,
               "sections": []}
    print("gradacc_compat benchmark: TensorFlow %s, Keras %s, Python %s; N=%d micro-batches "
          "of b=%d; %d rounds of %d effective step(s) per candidate"
          % (results["tf"], results["keras"], results["python"], args.steps, args.batch,
             args.rounds, args.cycles))
    if "loops" not in skip:
        for name in args.workloads.split(","):
            results["sections"].append(_workload_section(workloads.get(name), args))
    if "targets" not in skip:
        for name in args.workloads.split(","):
            results["sections"].append(_target_section(workloads.get(name), args))
    if "eager" not in skip:
        results["sections"].append(_eager_section(workloads.get(args.eager_workload), args))
    if "mirrored" not in skip:
        results["mirrored"] = _mirrored_section(workloads.get(args.workloads.split(",")[0]), args)
        results["sections"].append(results["mirrored"])
    if "memory" not in skip:
        results["memory"] = _memory_section(workloads.get(args.memory_workload), args)
    results["targets"] = _targets(results)
    print("\n## targets (read from this run; nothing is asserted)")
    for line in results["targets"]:
        print("%-5s %s" % ("PASS" if line["met"] else ("n/a" if line["met"] is None else "MISS"),
                           line["text"]))
    if args.json:
        report.write_json(args.json, results)
        print("\nwrote %s" % args.json)
    if args.png:
        why = report.write_png(args.png, results)
        print("no plot: %s" % why if why else "wrote %s" % args.png)
    return 0


# ---------------------------------------------------------------- timing
def _timed(title, found, baseline, args, note="", pairs=None):
    """Warm-up (two effective steps from the same weights: the exactness
    check, and every trace), then alternating rounds; one row each. With
    ``pairs`` ((candidate, other) names), rounds go on until each pair's
    speed ratio is resolved (see :func:`timing.until_resolved`), and the
    section lists each pair's median and 95% interval."""
    reference, warm = {}, {}
    for c in found:
        c.block(2)
        warm[c.name] = c.weights()
        if "big(N*b)" in c.name and _group(c.name) not in reference:
            reference[_group(c.name)] = warm[c.name]
    traced = dict((c.name, c.traces[0]) for c in found)
    iterations = dict((c.name, _iterations(c.optimizer)) for c in found)
    names = set(c.name for c in found)
    pairs = [p for p in pairs or [] if p[0] in names and p[1] in names]
    intervals = []
    if pairs:
        samples, resolved, spent = timing.until_resolved(
            found, args.steps, args.cycles, pairs, args.resolution, args.resolve_seconds,
            first=args.rounds)
        intervals = [{"name": a, "other": b, "speed": list(resolved[(a, b)]),
                      "rounds": len(samples[a]), "seconds": spent} for a, b in pairs]
    else:
        samples = timing.alternate(found, args.steps, args.rounds, args.cycles)
    rows = []
    for c in found:
        ref = reference.get(_group(c.name))
        row = {"name": c.name, "what": c.what, "ms": timing.spread(samples[c.name]),
               "speed": timing.paired(samples[_baseline(c.name, baseline, samples)],
                                      samples[c.name]),
               "retraces": (c.traces[0] - traced[c.name]) if traced[c.name] else None,
               "max_dw": (_max_diff(warm[c.name], ref)
                          if c.exact and ref is not None else None),
               "iterations_per_effective_step": (
                   None if iterations[c.name] is None else iterations[c.name] / 2.0)}
        for floor in candidates.FLOORS:
            if floor in samples and not c.name.startswith("fit"):
                row["vs_" + floor.replace("+", "_")] = timing.paired(samples[c.name],
                                                                      samples[floor])
                row["overhead_ms_vs_" + floor.replace("+", "_")] = timing.spread(
                    np.asarray(samples[c.name]) - np.asarray(samples[floor]))
        rows.append(row)
    section = {"title": title, "baseline": baseline, "rows": rows, "note": note,
               "samples": samples, "intervals": intervals}
    report.print_section(section)
    return section


def _baseline(name, baseline, samples):
    """What a row's speed is relative to: ``fit plain(b)`` for fit rows
    (where it ran), the section's baseline for the others."""
    if name.startswith("fit") and "fit plain(b)" in samples:
        return "fit plain(b)"
    return baseline


def _group(name):
    """Candidates compared with the same reference: XLA ones with the XLA big
    batch; fit ones with fit's big batch where their optimizer differs from
    the loops' (TF 1.x: v1 Adam in loops), else with the loops' (it sums
    duplicate rows of sparse gradients, as their mean has them); the rest
    with the big batch."""
    if "XLA" in name:
        return "xla"
    return "fit" if name.startswith("fit") and compat.TF1 else ""


def _iterations(optimizer):
    value = getattr(optimizer, "iterations", None)
    try:
        return None if value is None else int(np.asarray(value))
    except (TypeError, ValueError):
        return None


def is_ours(name):
    """Whether a candidate is gradacc_compat's (its targets are ours) rather
    than an alternative shown beside it."""
    return name.startswith("gac") or name.startswith("fit gac")


def _max_diff(got, want):
    return float(max(np.max(np.abs(a - b)) for a, b in zip(got, want)))


def _workload_section(workload, args):
    s = candidates.Setting(workload, args.steps, args.batch)
    found = suites.loop_candidates(s, eager=True) + suites.fit_candidates(s)
    return _timed("%s, one device (%s)" % (workload.name, workload.description), found,
                  "plain(b)", args,
                  note="speed: examples/s relative to plain(b), paired per round; fit rows "
                       "against fit plain(b)")


def _eager_section(workload, args):
    # v1 Adam on every TF: one optimizer's eager apply (Keras 3's costs
    # ~5 ms a variable eagerly and would hide what accumulation adds).
    s = candidates.Setting(workload, args.steps, args.batch, v1_adam=True)
    found = suites.eager_candidates(s)
    return _timed("eager overhead, %s, v1 Adam, gradients computed once" % workload.name,
                  found, "eager apply", args,
                  note="per micro-step: the accumulation's own work (or the optimizer's "
                       "apply) with no forward/backward",
                  pairs=[("gac eager", "eager floor+write"), ("gac eager", "eager apply")])


#: The targets' comparisons: (candidate, what it must be at least as fast as).
TARGET_PAIRS = [("gac tf.function", "floor+write"), ("gac tf.function", "keras3 own loop"),
                ("gac tf.function", "reduce-every-micro-step"),
                ("fit gac.wrap", "fit keras3 own"), ("fit gac.wrap", "fit horovod bpps")]

#: Resolved beside them, shown and not held to 1.0: the accumulator used
#: host-counted (``acc.accumulate`` and ``acc.apply_gradients``), as the
#: floor and the tutorial loop are, tells what ``acc.step``'s in-graph
#: decision costs.
SHOWN_PAIRS = [("gac host-counted", "floor+write"),
               ("gac host-counted", "reduce-every-micro-step")]


def _target_section(workload, args):
    """Only what the speed targets compare, timed until each comparison's
    95% interval is within +-``args.resolution`` (or the time is up)."""
    s = candidates.Setting(workload, args.steps, args.batch)
    found = suites.target_candidates(s)
    return _timed("targets, %s" % workload.name, found, "floor+write", args,
                  note="rounds until every comparison's 95%% interval of the median speed "
                       "ratio is within +-%g (at most %d s)" % (args.resolution,
                                                              args.resolve_seconds),
                  pairs=TARGET_PAIRS + SHOWN_PAIRS)


def _mirrored_section(workload, args):
    from gradacc_compat.distributed.diagnostics import count_reductions
    strategy = compat.mirrored_strategy(["/cpu:0", "/cpu:1"])
    # Counted eagerly: a tf.function counts its trace, not its runs.
    eager = candidates.Setting(workload, args.steps, args.batch, strategy, traced=False)
    counts = {}
    for c in _mirrored(eager):
        c.block(1)  # creates slots and accumulators
        with count_reductions(strategy) as counter:
            c.block(2)
        counts[c.name] = (counter.calls / 2.0, counter.bytes / 2.0)
    s = candidates.Setting(workload, args.steps, args.batch, strategy)
    found = _mirrored(s)
    section = _timed("MirroredStrategy, 2 logical CPUs, %s" % workload.name, found,
                     "plain(b)", args, note="reductions / bytes per effective step: " + ", ".join(
                         "%s %g / %d" % (k, v[0], v[1]) for k, v in sorted(counts.items())))
    for row in section["rows"]:
        row["reductions_per_effective_step"], row["bytes_per_effective_step"] = \
            counts.get(row["name"], (None, None))
    return section


def _mirrored(s):
    return [candidates.plain(s), candidates.big(s), candidates.accumulator(s),
            candidates.tutorial(s)]


def _memory_section(workload, args):
    print("\n## memory (%s, N=%d, b=%d; each in a fresh process, %d per mode, alternating; "
          "medians [min-max])" % (workload.description, args.steps, args.memory_batch,
                                  args.memory_repeats))
    measured = dict((mode, []) for mode, _ in memory.MODES)
    for _ in range(args.memory_repeats):  # a process's peak moves by ~10 MiB run to run
        for mode, _ in memory.MODES:
            measured[mode].append(memory.measure(workload, mode, args.steps, args.memory_batch))
    runs = [memory.summary(measured[mode]) for mode, _ in memory.MODES]
    for run_ in runs:
        print("%-18s %s" % (run_["mode"], _memory_text(run_)))
    section = {"workload": workload.name, "runs": runs, "repeats": args.memory_repeats}
    peaks = dict((r["mode"], r) for r in runs)
    acc, big = peaks.get("accumulate(N,b)", {}), peaks.get("plain(N*b)", {})
    if acc.get("peak_virtual") and big.get("peak_virtual") and not args.quick:
        cap = (acc["peak_virtual"] + big["peak_virtual"]) // 2
        print("under one address-space cap of %.0f MiB (RLIMIT_AS):" % (cap / 2.0 ** 20))
        section["cap"] = cap
        section["capped"] = [memory.measure(workload, mode, args.steps, args.memory_batch, cap)
                             for mode in ("accumulate(N,b)", "plain(N*b)")]
        for run_ in section["capped"]:
            print("%-18s %s" % (run_["mode"], _memory_text(run_)))
    return section


def _memory_text(run_):
    if run_.get("failed"):
        return "FAILED%s: %s" % (" (out of memory)" if run_.get("out_of_memory") else "",
                                 run_["failed"])
    text = "peak RSS %.0f MiB" % (run_["peak_rss"] / 2.0 ** 20)
    if len(run_.get("peak_rss_samples") or []) > 1:
        text += " [%.0f-%.0f]" % (min(run_["peak_rss_samples"]) / 2.0 ** 20,
                                  max(run_["peak_rss_samples"]) / 2.0 ** 20)
    text += ", peak virtual %.0f MiB" % (run_["peak_virtual"] / 2.0 ** 20)
    if run_.get("allocator_peak"):
        text += ", allocator peak %.0f MiB" % (run_["allocator_peak"] / 2.0 ** 20)
    return text + ", completed"


# --------------------------------------------------------------- targets
def _targets(results):
    lines = []

    def target(text, met):
        lines.append({"text": text, "met": met})

    for section in results["sections"]:
        rows = dict((r["name"], r) for r in section["rows"])
        title = section["title"].split(" (")[0]

        for pair in section.get("intervals", []):
            speed = pair["speed"]
            resolved = timing.resolved(speed, results["resolution"])
            if pair["name"] == "gac eager":  # time ratio: at most 1.1 x the floor / 1 x apply
                bound = 1.1 if pair["other"] == "eager floor+write" else 1.0
                time_ratio = [1.0 / speed[0], 1.0 / speed[2], 1.0 / speed[1]]
                target("%s: gac eager time <= %g x %s: %.3f, 95%% interval %.3f-%.3f (%d rounds)"
                       % ((title, bound, pair["other"]) + tuple(time_ratio) + (pair["rounds"],))
                       + ("" if resolved else "; not resolved to +-%g" % results["resolution"]),
                       time_ratio[2] <= bound or (resolved and time_ratio[1] <= bound))
                continue
            shown = (pair["name"], pair["other"]) in SHOWN_PAIRS
            target("%s: %s %s %s in speed: %.3f, 95%% interval %.3f-%.3f (%d rounds)"
                   % ((title, pair["name"], "/" if shown else ">=", pair["other"]) + tuple(speed)
                      + (pair["rounds"],))
                   + ("" if resolved else "; not resolved to +-%g" % results["resolution"])
                   + (" (shown, not a target)" if shown else ""),
                   None if shown else speed[1] >= 1.0 or (resolved and speed[2] >= 1.0))
        for name, row in sorted(rows.items()):
            iterations = row.get("iterations_per_effective_step")
            if row.get("max_dw") is not None and not is_ours(name):
                # An alternative's exactness is a fact to show, not our target.
                target("%s: %s (not ours) against the big batch: max|dw| %.1e, optimizer "
                       "iterations per effective step %s"
                       % (title, name, row["max_dw"], "-" if iterations is None else
                          "%g" % iterations), None)
            elif row.get("max_dw") is not None:
                target("%s: %s equals the big batch: max|dw| %.1e" % (title, name, row["max_dw"]),
                       row["max_dw"] <= 1e-5)
            if is_ours(name) and iterations is not None:
                target("%s: %s counts effective steps: optimizer iterations per effective "
                       "step %g" % (title, name, iterations), iterations == 1)
            if row.get("retraces") is not None and name.startswith("gac"):
                target("%s: %s retraces after warm-up: %d" % (title, name, row["retraces"]),
                       row["retraces"] == 0)
        if "gac tf.function" in rows and rows["gac tf.function"].get(
                "reductions_per_effective_step") is not None:
            acc, big = rows["gac tf.function"], rows["big(N*b)"]
            target("%s: one all-reduce per effective step (%g), the big batch's bytes (%d vs %d)"
                   % (title, acc["reductions_per_effective_step"],
                      acc["bytes_per_effective_step"], big["bytes_per_effective_step"]),
                   acc["reductions_per_effective_step"] == big["reductions_per_effective_step"]
                   and acc["bytes_per_effective_step"] == big["bytes_per_effective_step"])
    runs = dict((r["mode"], r) for r in (results.get("memory") or {}).get("runs", []))
    if all(runs.get(m, {}).get("peak_rss") for m, _ in memory.MODES):
        acc, plain = runs["accumulate(N,b)"], runs["plain(b)"]
        limit = plain["peak_rss"] + 1.2 * acc["parameter_bytes"]
        target("memory: accumulate(N,b) peak RSS %.0f MiB <= plain(b) %.0f MiB + 1.2 x "
               "parameters (%.0f MiB)" % (acc["peak_rss"] / 2.0 ** 20, plain["peak_rss"] / 2.0 ** 20,
                                          acc["parameter_bytes"] / 2.0 ** 20),
               acc["peak_rss"] <= limit)
    capped = dict((r["mode"], r) for r in (results.get("memory") or {}).get("capped", []))
    if capped:
        target("memory cap: plain(N*b) runs out of memory, accumulate(N,b) completes",
               bool(capped["plain(N*b)"].get("out_of_memory"))
               and not capped["accumulate(N,b)"].get("failed"))
    return lines
