"""Precision and recall of ``lint`` on a corpus of real files read by hand.

    python tests/score_lint_corpus.py TRUTH.json [TRUTH.json ...] --files DIR [--detail]

Each truth file maps a file name (found under ``--files``, in any folder
below it) to what a reader wrote before lint ran: ``bugs`` and ``doubtful``,
each a list of ``{"line": n, "code": "GAC1nn", "why": ...}``. A bug is
found when lint reports its code within ``WITHIN`` lines of it; a finding
near no bug and no doubtful entry of its code is false; doubtful entries
count neither way. The corpus itself is third-party code and stays outside
this repository; the truths (``docs/lint-truth/``) name each file by its
search-index read id, so it can be fetched again.
"""
from __future__ import absolute_import, division, print_function

import argparse
import io
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from gradacc_compat import lint  # noqa: E402

WITHIN = 12


def _near(line, entries, code):
    return [e for e in entries if e["code"] == code and abs(e["line"] - line) <= WITHIN]


def score_file(source, name, truth):
    """``(found, false, missed)`` lists of ``(name, line, code)`` for one file."""
    try:
        findings = [f for f in lint.lint_source(source, name) if f.code.startswith("GAC1")]
    except SyntaxError as error:  # (not parsed here: no finding, each bug a miss)
        sys.stderr.write("%s: not parsed (%s)\n" % (name, error))
        findings = []
    bugs, doubtful = truth.get("bugs", []), truth.get("doubtful", [])
    found, missed = [], []
    for bug in bugs:
        hit = [f for f in findings if f.code == bug["code"] and abs(f.line - bug["line"]) <= WITHIN]
        (found if hit else missed).append((name, bug["line"], bug["code"]))
    false = [(name, f.line, f.code) for f in findings
             if not _near(f.line, bugs, f.code) and not _near(f.line, doubtful, f.code)]
    return found, false, missed


def _sources(folder):
    paths = {}
    for root, _, names in os.walk(folder):
        for name in names:
            if name.endswith(".py"):
                paths[name] = os.path.join(root, name)
    return paths


def score(truths, folder):
    """Per code ``{"found": [...], "false": [...], "missed": [...]}`` over every truth."""
    paths, per_code = _sources(folder), {}
    for truth in truths:
        for name, entry in sorted(truth.items()):
            if name not in paths:
                raise SystemExit("%s: not under %s (fetch it by its read id first)"
                                 % (name, folder))
            with io.open(paths[name], encoding="utf-8", errors="replace") as f:
                source = f.read()
            for kind, items in zip(("found", "false", "missed"), score_file(source, name, entry)):
                for item in items:
                    kinds = per_code.setdefault(item[2], {"found": [], "false": [], "missed": []})
                    kinds[kind].append(item)
    return per_code


def _ratio(a, b):
    return "%.2f" % (a / float(a + b)) if a + b else "-"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("truths", nargs="+")
    parser.add_argument("--files", required=True)
    parser.add_argument("--detail", action="store_true", help="list each false and missed finding")
    args = parser.parse_args(argv)
    truths = []
    for path in args.truths:
        with io.open(path, encoding="utf-8") as f:
            truths.append(json.load(f))
    per_code = score(truths, args.files)
    totals = [0, 0, 0]
    print("code    found false missed")
    for code, kinds in sorted(per_code.items()):
        counts = [len(kinds[k]) for k in ("found", "false", "missed")]
        totals = [t + c for t, c in zip(totals, counts)]
        print("%s %5d %5d %6d" % (code, counts[0], counts[1], counts[2]))
    found, false, missed = totals
    print("all    %5d %5d %6d   precision %s recall %s"
          % (found, false, missed, _ratio(found, false), _ratio(found, missed)))
    if args.detail:
        for code, kinds in sorted(per_code.items()):
            for kind in ("false", "missed"):
                for name, line, _ in kinds[kind]:
                    print("%s %s %s:%d" % (kind, code, name, line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
