"""gradacc_compat: exact gradient accumulation on TensorFlow 1.14 -> 2.x.

    import gradacc_compat as gac
    acc = gac.GradientAccumulator(steps=4)
    acc.step(optimizer, grads, variables)

See README.md for the contract; ``gac.show_versions()`` for bug reports.
Without TensorFlow the package still imports, so that ``gradacc-lint``
(``gradacc_compat.lint``) runs where legacy code lives; every other name
then raises the ImportError that says what to install.
"""
from __future__ import absolute_import

from gradacc_compat._version import __version__

__all__ = ["__version__", "AccumulationWarning", "GradientAccumulator", "effective_batch_size",
           "flush_at_epoch_end", "keras_custom_objects", "show_versions",
           "steps_for_effective_batch", "verify", "wrap"]

try:
    from gradacc_compat import compat  # noqa: F401  (the clear ImportError without TF)
except ImportError as _error:
    _NO_TENSORFLOW = str(_error)

    class _NeedsTensorFlow(object):
        """Stands for a name that needs TensorFlow: using it raises."""

        def __init__(self, name):
            self._name = name

        def _raise(self, *args, **kwargs):
            raise ImportError("gradacc_compat.%s: %s" % (self._name, _NO_TENSORFLOW))

        __call__ = _raise

        def __getattr__(self, attribute):
            self._raise()

    for _name in __all__[1:] + ["cluster", "compat"]:
        globals()[_name] = _NeedsTensorFlow(_name)
    del _name
else:
    from gradacc_compat import cluster  # noqa: F401  (gac.cluster.multi_worker())
    from gradacc_compat.core.accumulator import GradientAccumulator
    from gradacc_compat.core.audit import AccumulationWarning
    from gradacc_compat.core.batching import effective_batch_size, steps_for_effective_batch
    from gradacc_compat.tools.info import show_versions
    from gradacc_compat.tools.verification import verify
    from gradacc_compat.wrapping import flush_at_epoch_end, keras_custom_objects, wrap
