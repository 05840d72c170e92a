"""gradacc_compat: exact gradient accumulation on TensorFlow 1.14 -> 2.x.

    import gradacc_compat as gac
    acc = gac.GradientAccumulator(steps=4)
    acc.step(optimizer, grads, variables)

See README.md for the contract; ``gac.show_versions()`` for bug reports.
"""
from __future__ import absolute_import

from gradacc_compat._version import __version__
from gradacc_compat import compat  # noqa: F401  (raises a clear ImportError without TF)
from gradacc_compat import cluster  # noqa: F401  (gac.cluster.multi_worker())
from gradacc_compat.core.accumulator import GradientAccumulator
from gradacc_compat.core.audit import AccumulationWarning
from gradacc_compat.core.batching import effective_batch_size, steps_for_effective_batch
from gradacc_compat.tools.info import show_versions
from gradacc_compat.tools.verification import verify
from gradacc_compat.wrapping import flush_at_epoch_end, keras_custom_objects, wrap

__all__ = ["__version__", "AccumulationWarning", "GradientAccumulator", "effective_batch_size",
           "flush_at_epoch_end", "keras_custom_objects", "show_versions",
           "steps_for_effective_batch", "verify", "wrap"]
