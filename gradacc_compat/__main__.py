"""``python -m gradacc_compat info`` | ``check``."""
from __future__ import absolute_import, print_function

import sys

USAGE = """usage: python -m gradacc_compat COMMAND

commands:
  info    print Python, TensorFlow, Keras, mode, devices and adapters
  check   info, then an exactness self-check on the installed TensorFlow
"""


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 1 or argv[0] not in ("info", "check"):
        sys.stderr.write(USAGE)
        return 2
    import gradacc_compat
    gradacc_compat.show_versions()
    if argv[0] == "check":
        from gradacc_compat import selfcheck
        return selfcheck.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
