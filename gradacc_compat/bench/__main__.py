"""``python -m gradacc_compat.bench``: see :mod:`gradacc_compat.bench`."""
import sys

from gradacc_compat.bench import main

sys.exit(main())
