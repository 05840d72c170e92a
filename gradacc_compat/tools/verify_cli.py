"""``python -m gradacc_compat verify [SPEC]``: ``gac.verify`` from the
command line; the MirroredStrategy rows of TF2 run in a child process with
two logical CPUs."""
from __future__ import absolute_import, division, print_function

import json
import subprocess
import sys

from gradacc_compat import compat
from gradacc_compat.compat import tf
from gradacc_compat.tools import testing
from gradacc_compat.tools.spec import load_spec
from gradacc_compat.tools.verification import MIRRORED, Row, verify

__all__ = ["main"]

ROWS_TAG = "GAC-VERIFY-ROWS "

USAGE = """usage: python -m gradacc_compat verify [SPEC] [--steps N] [--eager] [--no-subprocess]

SPEC is MODULE:FUNCTION or FILE.py:FUNCTION; FUNCTION() returns a dict of
gac.verify arguments, e.g. dict(model=make_model, optimizer=lambda: Adam(),
batch=(x, y), steps=4, loss="mse"). Without SPEC: a built-in model.
--eager: TF 1.x eager (TF2 is eager anyway). MirroredStrategy rows of TF2
run in a fresh process (two logical CPUs) unless --no-subprocess. Exit
status 1 when a row FAILS.
"""


def main(argv):
    args = list(argv)
    distributed_only = "--distributed-only" in args  # the child process
    in_process = "--no-subprocess" in args or distributed_only
    if "--eager" in args and compat.TF1:  # must be the first TF call
        tf.compat.v1.enable_eager_execution(config=compat.tf1_session_config(testing.REPLICAS))
    args = [a for a in args if a not in ("--distributed-only", "--no-subprocess", "--eager")]
    tf.get_logger().setLevel("ERROR")
    overrides = {}
    if "--steps" in args:
        at = args.index("--steps")
        try:
            overrides["steps"] = int(args[at + 1])
        except (IndexError, ValueError):
            sys.stderr.write(USAGE)
            return 2
        del args[at:at + 2]
    if len(args) > 1 or (args and args[0].startswith("-")):
        sys.stderr.write(USAGE)
        return 2
    spec = args[0] if args else ""
    if distributed_only:
        why = testing.setup_logical_cpus()
        if why:
            print(ROWS_TAG + json.dumps([{"note": why}]))
            return 0
    kwargs = load_spec(spec)
    kwargs.update(overrides)
    eager = compat.eager_by_default()
    if distributed_only:
        report = verify(distributed=True, print_fn=None, _strategy_rows_only=True, **kwargs)
        print(ROWS_TAG + json.dumps([r.as_dict() for r in report.rows]))
        return 0
    child = not in_process and eager and testing.logical_cpus() < testing.REPLICAS
    report = verify(distributed=None if not child else False, print_fn=None, **kwargs)
    if child:
        report.rows.extend(child_rows(spec, overrides))
    print(report)
    return 0 if report.passed else 1


def child_rows(spec, overrides):
    """The MirroredStrategy rows, from a fresh process with two logical CPUs."""
    command = [sys.executable, "-m", "gradacc_compat", "verify", "--distributed-only"]
    command += [spec] if spec else []
    command += ["--steps", str(overrides["steps"])] if "steps" in overrides else []
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    for line in out.decode("utf-8", "replace").splitlines():
        if line.startswith(ROWS_TAG):
            rows = [Row(**r) if "mode" in r else
                    Row("*", "*", MIRRORED, note=r["note"])
                    for r in json.loads(line[len(ROWS_TAG):])]
            return rows
    tail = err.decode("utf-8", "replace").strip().splitlines()[-5:]
    return [Row("*", "*", MIRRORED, passed=False,
                weights=float("nan"), state=float("nan"),
                note="the strategy process failed (exit %d): %s" % (proc.returncode,
                                                                     " | ".join(tail)))]
