"""``python -m gradacc_compat.lint [--suggest] [--format=...] PATH...``."""
import sys

from gradacc_compat.lint import main

sys.exit(main())
