"""``python -m gradacc_compat verify`` | ``info`` | ``check`` | ``demo`` | ``lint PATH...``."""
from __future__ import absolute_import, print_function

import sys

USAGE = """usage: python -m gradacc_compat COMMAND

commands:
  info    print Python, TensorFlow, Keras, mode, devices and adapters
  verify  [SPEC] [--steps N]  accumulation vs the big batch on your model (or
          a built-in one) in every mode and strategy this TF offers; exit 1 on
          a FAIL (SPEC: MODULE:FUNCTION returning gac.verify's arguments)
  check   info, then verify's built-in model (an alias of verify)
  demo    train a small model with accumulation, with a progress bar, and
          compare its weights with the big batch's
  lint    [--suggest] PATH...  report hand-rolled accumulation mistakes in
          Python files (nothing is run); exit 1 when something is found
  record  [SPEC] --out RUN  train a few steps and write them to RUN (one .npz)
  replay  [SPEC] --against RUN  train the RUN's steps from its weights and
          batches here (another TF) and show where the two part; exit 1 if
          they do (see `record --help`)
"""


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "lint":
        from gradacc_compat import lint
        return lint.main(argv[1:])
    if argv and argv[0] == "verify":
        from gradacc_compat.tools import verify_cli
        return verify_cli.main(argv[1:])
    if argv and argv[0] in ("record", "replay"):
        from gradacc_compat.tools import migration_cli
        if "--help" in argv or "-h" in argv:
            sys.stdout.write(migration_cli.USAGE)
            return 0
        return migration_cli.main(argv[0], argv[1:])
    if argv == ["demo"]:
        from gradacc_compat.tools import demo
        return demo.main()
    if len(argv) != 1 or argv[0] not in ("info", "check"):
        sys.stderr.write(USAGE)
        return 2
    import gradacc_compat
    gradacc_compat.show_versions()
    if argv[0] == "check":
        from gradacc_compat.tools import verify_cli
        print()
        return verify_cli.main([])
    return 0


if __name__ == "__main__":
    sys.exit(main())
