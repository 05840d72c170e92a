"""``gradacc_compat.cluster``: the documented path of
``gradacc_compat.distributed.cluster``."""
from __future__ import absolute_import

from gradacc_compat.distributed.cluster import *  # noqa: F401,F403
from gradacc_compat.distributed.cluster import __all__  # noqa: F401
