"""gradacc_compat: exact gradient accumulation on TensorFlow 1.14 -> 2.x.

    import gradacc_compat as gac
    acc = gac.GradientAccumulator(steps=4)
    acc.step(optimizer, grads, variables)

See README.md for the contract; ``gac.show_versions()`` for bug reports.
Importing the package does not import TensorFlow: its names load on first
use, so that ``gradacc-lint`` (``gradacc_compat.lint``) runs in a second,
with or without TensorFlow (on Python 2.7 too). Without TensorFlow, every name
here raises the ImportError that says what to install.
"""
from __future__ import absolute_import

import importlib
import sys
import types

from gradacc_compat import keras_classes as _keras_classes
from gradacc_compat._version import __version__

__all__ = ["__version__", "AccumulationWarning", "GradientAccumulator", "effective_batch_size",
           "flush_at_epoch_end", "keras_custom_objects", "record", "replay", "show_versions",
           "steps_for_effective_batch", "verify", "wrap"]

#: name -> the module that defines it (a module itself when the names match).
_WHERE = {
    "GradientAccumulator": "gradacc_compat.core.accumulator",
    "AccumulationWarning": "gradacc_compat.core.audit",
    "effective_batch_size": "gradacc_compat.core.batching",
    "steps_for_effective_batch": "gradacc_compat.core.batching",
    "show_versions": "gradacc_compat.tools.info",
    "verify": "gradacc_compat.tools.verification",
    "record": "gradacc_compat.tools.migration",
    "replay": "gradacc_compat.tools.migration",
    "wrap": "gradacc_compat.wrapping",
    "flush_at_epoch_end": "gradacc_compat.wrapping",
    "keras_custom_objects": "gradacc_compat.wrapping",
    "cluster": "gradacc_compat.cluster",  # gac.cluster.multi_worker()
    "compat": "gradacc_compat.compat",
}


def _load(name):
    module = importlib.import_module(_WHERE[name])
    value = module if _WHERE[name].endswith("." + name) else getattr(module, name)
    setattr(sys.modules[__name__], name, value)
    return value


class _Package(types.ModuleType):
    """The package: a name of ``_WHERE`` loads on first use."""

    def __getattr__(self, name):
        if name in _WHERE:
            return _load(name)
        raise AttributeError("module 'gradacc_compat' has no attribute %r" % (name,))


# Unpickling a wrapper in a fresh process asks keras_classes first.
_keras_classes.register_loader(lambda: _load("wrap"))

# A module of that class stands in this one's place, with the same names
# (Python 2.7 has no module ``__getattr__`` and cannot change a module's
# class); it keeps this one, whose names its functions read.
_package = _Package(__name__, __doc__)
_package.__dict__.update(globals())
_package._module = sys.modules[__name__]
sys.modules[__name__] = _package
