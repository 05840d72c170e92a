"""The benchmark's outputs: a text table, a JSON file, and (with the
optional ``gradacc_compat[bench]`` extra, matplotlib) a PNG plot."""
from __future__ import absolute_import, division, print_function

import json

__all__ = ["row_text", "print_section", "write_json", "write_png"]


def _range(values, fmt="%.2f"):
    if values is None:
        return "-"
    return (fmt + " [" + fmt + "-" + fmt + "]") % tuple(values)


def row_text(row):
    dw = row.get("max_dw")
    iterations = row.get("iterations_per_effective_step")
    return "%-24s %-24s %-22s %-22s %-9s %-9s %s" % (
        row["name"], _range(row.get("ms")), _range(row.get("speed")),
        _range(row.get("vs_floor_write")),
        "-" if dw is None else "%.1e" % dw,
        "-" if row.get("retraces") is None else row["retraces"],
        "-" if iterations is None else "%g" % iterations)


def print_section(section):
    print("\n## %s" % section["title"])
    if section.get("note"):
        print(section["note"])
    print("%-24s %-24s %-22s %-22s %-9s %-9s %s" % (
        "candidate", "ms/micro-step [IQR]", "speed vs " + section["baseline"],
        "time / floor+write", "max|dw|", "retraces", "iterations/effective step"))
    for row in section["rows"]:
        print(row_text(row))
    for pair in section.get("intervals", []):
        print("speed of %s / %s: %.3f, 95%% interval %.3f-%.3f (%d rounds, %.0f s)"
              % ((pair["name"], pair["other"]) + tuple(pair["speed"])
                 + (pair["rounds"], pair["seconds"])))


def write_json(path, results):
    with open(path, "w") as out:
        json.dump(results, out, indent=1, sort_keys=True)


def write_png(path, results):
    """Median ms per micro-step with interquartile bars, one panel per
    timed section, plus the memory peaks. Returns why not, or None."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install gradacc_compat[bench])"
    sections = [s for s in results["sections"] if s["rows"]]
    memory = results.get("memory") or {}
    panels = len(sections) + (1 if memory.get("runs") else 0)
    figure, axes = plt.subplots(panels, 1, figsize=(9, 2.6 * panels + 0.6), squeeze=False)
    for axis, section in zip(axes[:, 0], sections):
        rows = [r for r in section["rows"] if r.get("ms")]
        medians = [r["ms"][0] for r in rows]
        errors = [[r["ms"][0] - r["ms"][1] for r in rows], [r["ms"][2] - r["ms"][0] for r in rows]]
        colors = ["tab:green" if r["name"].startswith(("gac", "fit gac")) else
                  ("tab:gray" if "floor" in r["name"] else "tab:blue") for r in rows]
        axis.barh(range(len(rows)), medians, xerr=errors, color=colors)
        axis.set_yticks(range(len(rows)))
        axis.set_yticklabels([r["name"] for r in rows], fontsize=7)
        axis.invert_yaxis()
        axis.set_xlabel("ms per micro-step (median, interquartile)", fontsize=7)
        axis.set_title(section["title"], fontsize=8)
    if memory.get("runs"):
        axis = axes[-1, 0]
        runs = [r for r in memory["runs"] if r.get("peak_rss")]
        axis.barh(range(len(runs)), [r["peak_rss"] / 2.0 ** 20 for r in runs], color="tab:purple")
        axis.set_yticks(range(len(runs)))
        axis.set_yticklabels([r["mode"] for r in runs], fontsize=7)
        axis.invert_yaxis()
        axis.set_xlabel("peak RSS, MiB (%s)" % memory.get("workload", ""), fontsize=7)
        axis.set_title("memory", fontsize=8)
    figure.suptitle("gradacc_compat benchmark: TF %s, N=%d" % (results["tf"], results["steps"]),
                    fontsize=9)
    figure.tight_layout(rect=(0, 0, 1, 0.985))
    figure.savefig(path, dpi=110)
    return None
