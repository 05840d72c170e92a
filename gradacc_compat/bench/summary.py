"""The README's cost tables, generated from a benchmark result file so the
figures cannot drift from it:

    python -m gradacc_compat.bench.summary docs/bench-tf2.21.json

prints, for each one-device workload and the MirroredStrategy section, the
rows a user compares (what they would run instead, the floor, the
accumulator, ``fit``), and the README holds that output verbatim
(``tests/test_readme.py`` compares them). It reads JSON only.
"""
from __future__ import absolute_import, division, print_function

import io
import json
import sys

__all__ = ["summary", "main"]

#: Rows shown per section, in this order, where the section has them.
ROWS = ("plain(b)", "big(N*b)", "floor+write", "gac tf.function", "reduce-every-micro-step",
        "keras3 own loop", "fit plain(b)", "fit gac.wrap", "fit keras3 own")
_OURS = ("gac tf.function", "fit gac.wrap")


def _columns(result):
    """(heading, section) per one-device workload, then MirroredStrategy."""
    found = [(s["title"].split(",")[0], s) for s in result["sections"]
             if "one device" in s["title"]]
    if result.get("mirrored"):
        found.append(("MirroredStrategy x2, %s" % result["mirrored"]["title"].split(", ")[-1],
                      result["mirrored"]))
    return found


def _cell(row):
    if row is None:
        return ""
    cell = "%.2f ms, %.2fx" % (row["ms"][0], row["speed"][0])
    return cell + (", max\\|dw\\| %.0e" % row["max_dw"] if row.get("max_dw") else "")


def summary(result):
    """Markdown lines for a parsed result file: one table, a row per
    candidate, a column per workload (median ms per micro-step, speed
    against plain(b) -- fit rows against fit plain(b) --, the largest
    weight difference from the big batch)."""
    columns = _columns(result)
    lines = ["TF %s, Keras %s, Python %s; N=%d, b=%d, Adam; medians of %d rounds:"
             % (result["tf"], result.get("keras", "-"), result["python"], result["steps"],
                result["batch"], result["rounds"]), "",
             "| candidate | %s |" % " | ".join(h for h, _ in columns),
             "|---|%s" % ("---|" * len(columns))]
    for name in ROWS:
        rows = [dict((r["name"], r) for r in s["rows"]).get(name) for _, s in columns]
        if any(rows):
            label = "**%s**" % name if name in _OURS else name
            lines.append("| %s | %s |" % (label, " | ".join(_cell(r) for r in rows)))
    if result.get("mirrored", {}).get("note"):
        lines += ["", "MirroredStrategy, %s." % result["mirrored"]["note"]]
    return lines


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.stderr.write("usage: python -m gradacc_compat.bench.summary RESULT.json\n")
        return 2
    with io.open(argv[0], encoding="utf-8") as f:
        result = json.load(f)
    print("\n".join(summary(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
