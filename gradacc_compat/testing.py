"""``gradacc_compat.testing``: the documented path of
``gradacc_compat.tools.testing``."""
from __future__ import absolute_import

from gradacc_compat.tools.testing import *  # noqa: F401,F403
from gradacc_compat.tools.testing import __all__  # noqa: F401
