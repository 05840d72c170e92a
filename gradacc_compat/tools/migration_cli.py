"""``python -m gradacc_compat record`` and ``replay``."""
from __future__ import absolute_import, division, print_function

import sys

from gradacc_compat import compat
from gradacc_compat.compat import tf
from gradacc_compat.tools import migration, migration_report, runfile, testing
from gradacc_compat.tools.spec import load_spec

__all__ = ["main"]

USAGE = """usage:
  python -m gradacc_compat record [SPEC] --out RUN [--steps N] [--effective-steps K]
                                  [--mode eager|function|graph] [--eager]
  python -m gradacc_compat replay [SPEC] --against RUN [--steps N] [--map OLD=NEW]...
                                  [--tolerance T] [--mode eager|function|graph] [--eager]

SPEC is MODULE:FUNCTION or FILE.py:FUNCTION returning gac.verify's arguments
(model or loss + variables, optimizer: ONE factory, batch: one effective
batch or a list of them, steps, loss). Without SPEC: verify's built-in model
with Keras Adam, the same on every TensorFlow. record trains K effective
steps (default 3) and writes RUN (one .npz); replay loads RUN's initial
weights and batches into SPEC's variables (by order and shape; --map
'dense/*=dense_1/*' where the port renamed or reordered them), trains the
same steps (--steps: micro-batches per step, default the RUN's), prints a
table per step and variable and what it can name of a difference. Exit 1
when they part, 2 on bad arguments or an unreadable RUN.
"""

_VALUED = ("--out", "--against", "--steps", "--effective-steps", "--mode", "--tolerance",
           "--map")


def _parse(argv):
    options, positional, args = {"--map": []}, [], list(argv)
    while args:
        arg = args.pop(0)
        if arg in _VALUED:
            if not args:
                raise ValueError("%s needs a value" % arg)
            value = args.pop(0)
            if arg == "--map":
                old, sep, new = value.partition("=")
                if not sep or not old or not new:
                    raise ValueError("--map takes OLD=NEW (name patterns), got %r" % value)
                options["--map"].append((old, new))
            else:
                options[arg] = value
        elif arg == "--eager":
            options[arg] = True
        elif arg.startswith("-"):
            raise ValueError("unknown option %s" % arg)
        else:
            positional.append(arg)
    if len(positional) > 1:
        raise ValueError("one SPEC at most, got %s" % " ".join(positional))
    return options, (positional[0] if positional else "")


def main(command, argv):
    try:
        options, spec = _parse(argv)
        steps = int(options["--steps"]) if "--steps" in options else None
        mode = options.get("--mode")
        if mode is not None and mode not in testing.MODES:
            raise ValueError("--mode is one of %s, got %r" % (", ".join(testing.MODES), mode))
        if command == "record" and "--out" not in options:
            raise ValueError("record needs --out RUN")
        if command == "replay" and "--against" not in options:
            raise ValueError("replay needs --against RUN")
    except ValueError as err:
        sys.stderr.write("%s: %s\n%s" % (command, err, USAGE))
        return 2
    if options.get("--eager") and compat.TF1:  # must be the first TF call
        tf.compat.v1.enable_eager_execution()
    tf.get_logger().setLevel("ERROR")
    kwargs = load_spec(spec)
    if command == "record":
        kwargs["steps"] = steps or kwargs.get("steps") or 1
        kwargs["effective_steps"] = int(options.get("--effective-steps",
                                                    kwargs.get("effective_steps", 3)))
        trace = migration.record(options["--out"], mode=mode, **kwargs)
        print("recorded %d effective steps of %d micro-batch(es) on TF %s (%s, %s) to %s"
              % (trace.effective_steps, trace.meta["steps"], compat.TF_VERSION_STRING,
                 compat.KERAS_FLAVOUR, trace.meta["env"]["mode"], options["--out"]))
        return 0
    kwargs.pop("batch", None)  # the RUN's batches are replayed
    kwargs.pop("effective_steps", None)
    kwargs["steps"] = steps or kwargs.get("steps")
    try:
        comparison = migration.replay(options["--against"], mode=mode,
                                      mapping=dict(options["--map"]) or None,
                                      tolerance=float(options.get("--tolerance", 1e-5)),
                                      print_fn=print, **kwargs)
    except (runfile.RunFileError, migration_report.MatchError) as err:
        sys.stderr.write("replay: %s\n" % (err,))
        return 2
    return 0 if comparison.passed else 1
