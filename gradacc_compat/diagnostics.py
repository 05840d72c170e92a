"""``gradacc_compat.diagnostics``: the documented path of
``gradacc_compat.distributed.diagnostics``."""
from __future__ import absolute_import

from gradacc_compat.distributed.diagnostics import *  # noqa: F401,F403
from gradacc_compat.distributed.diagnostics import __all__  # noqa: F401
