"""Everything gradacc_compat knows about the TensorFlow it runs on.

This package is the ONLY place that looks at version numbers or probes for
symbols. ``facts`` turns what it finds into named facts (``TF_VERSION``,
``KERAS_FLAVOUR``, ``HAS_CONTRIB_DISTRIBUTE`` ...); ``graph``,
``distribute`` and ``keras_api`` are small adapters with one meaning on
every version (``run_in_replicas``, ``local_results``, ``do_not_convert``);
``devices`` holds what tests, the benchmark and the demo need (logical
CPUs, a TF1 session config). The rest of the package, the tests and the
benchmark use those names as ``compat.NAME`` and never branch on
``tf.__version__`` themselves.

Each shim says which releases need it, so it can be deleted when the oldest
supported TensorFlow moves past it.
"""
from __future__ import absolute_import

from gradacc_compat.compat import devices, distribute, facts, graph, keras_api
from gradacc_compat.compat.devices import *  # noqa: F401,F403
from gradacc_compat.compat.distribute import *  # noqa: F401,F403
from gradacc_compat.compat.facts import *  # noqa: F401,F403
from gradacc_compat.compat.graph import *  # noqa: F401,F403
from gradacc_compat.compat.keras_api import *  # noqa: F401,F403

__all__ = (facts.__all__ + graph.__all__ + distribute.__all__ + keras_api.__all__
           + devices.__all__)
