"""The facts: which TensorFlow and which Keras this is, and which symbols
it has (``TF_VERSION``, ``TF1``, ``KERAS_FLAVOUR``, ``HAS_STRATEGY_RUN``
...). The adapters beside this module (``graph``, ``distribute``,
``keras_api``, ``devices``) turn them into one meaning on every version.
"""
from __future__ import absolute_import, division, print_function

import re
import sys

try:
    import tensorflow as tf
except ImportError as _err:  # pragma: no cover - exercised without TF only
    raise ImportError(
        "gradacc_compat needs TensorFlow, but `import tensorflow` failed (%s). "
        "Install the build you want first, for example `pip install tensorflow` "
        "(or tensorflow-cpu, or tensorflow-gpu==1.15.5 for TF 1.x), or "
        "`pip install gradacc_compat[tf]`." % (_err,))

__all__ = ["tf", "TF_VERSION", "TF_VERSION_STRING", "TF1", "KERAS_FLAVOUR", "KERAS_VERSION",
           "HAS_CONTRIB_DISTRIBUTE", "HAS_STRATEGY_RUN", "HAS_TF_FUNCTION", "HAS_ESTIMATOR",
           "release_tuple", "keras_module"]


def release_tuple(version):
    """``"2.16.0rc0"`` -> ``(2, 16, 0)``: pre-releases count as their release."""
    parts = re.findall(r"\d+", version.split("-")[0])[:3]
    parts = [int(p) for p in parts] + [0] * (3 - len(parts))
    # "2.16.0rc0" -> ["2", "16", "0", "0"]: findall also sees the rc number,
    # which [:3] drops.
    return tuple(parts)


TF_VERSION_STRING = tf.__version__
TF_VERSION = release_tuple(tf.__version__)
#: TensorFlow 1.x: graph by default, tf.contrib present, v1 strategies.
TF1 = TF_VERSION < (2, 0, 0)

if TF1:
    # TF 1.14 (DeprecationWrapper) and 1.15 (TFModuleWrapper) wrap the
    # `tensorflow` module to warn about renamed symbols: every `tf.X` lookup
    # through the wrapper costs ~3 us, some 30 lookups a variable per eager
    # micro-step here. The package (and what imports `tf` from here) uses
    # the module itself; a user's own `import tensorflow` is unchanged.
    for _attribute in ("_dw_wrapped_module", "_tfmw_wrapped_module"):
        tf = getattr(tf, _attribute, tf)

# ---------------------------------------------------------------- symbols
#: ``strategy.run`` exists from TF 2.2; ``experimental_run_v2`` 1.15 -> 2.3.
HAS_STRATEGY_RUN = hasattr(tf.distribute.Strategy, "run")
#: ``tf.function`` (1.14 has it, usable in eager mode only).
HAS_TF_FUNCTION = hasattr(tf, "function")
#: ``tf.estimator`` is shipped up to 2.15 and gone from 2.16.
HAS_ESTIMATOR = TF_VERSION < (2, 16, 0) and hasattr(tf, "estimator")


def _probe_contrib_distribute():
    # TODO: remove when TF 1.15 is no longer supported (tf.contrib is 1.x only).
    if not TF1:
        return False
    try:
        from tensorflow.contrib import distribute  # noqa: F401
    except ImportError:
        return False
    return True


#: ``tf.contrib.distribute`` (TF 1.14 and 1.15 only).  Probed lazily: importing
#: tf.contrib costs seconds, so the fact is computed on first use.
class _LazyFact(object):
    def __init__(self, probe):
        self._probe = probe
        self._value = None

    def __bool__(self):
        if self._value is None:
            self._value = bool(self._probe())
        return self._value

    __nonzero__ = __bool__  # Python 2

    def __repr__(self):
        return repr(bool(self))


HAS_CONTRIB_DISTRIBUTE = _LazyFact(_probe_contrib_distribute)


# ------------------------------------------------------------------ Keras
def keras_module():
    """The Keras that ``tf.keras`` resolves to, or ``None`` if it cannot load."""
    try:
        return tf.keras
    except (ImportError, AttributeError):  # 2.16+ with no keras installed
        return None


def _keras_flavour():
    """("keras2" | "tf_keras" | "keras3" | None, version string or None)."""
    keras = keras_module()
    if keras is None:
        return None, None
    try:
        root = keras.optimizers.Optimizer.__module__.split(".")[0]
    except (ImportError, AttributeError):
        return None, None
    if root == "tf_keras":
        return "tf_keras", getattr(sys.modules.get("tf_keras"), "__version__", None)
    if root == "keras":
        version = getattr(sys.modules.get("keras"), "__version__", "2")
        return ("keras3" if release_tuple(version) >= (3, 0, 0) else "keras2"), version
    # tensorflow.python.keras (TF <= 2.5): Keras 2 built into TF.
    return "keras2", getattr(keras, "__version__", None)


#: Which Keras ``tf.keras`` is: "keras2" (built in / keras 2.x), "tf_keras"
#: (TF >= 2.16 with TF_USE_LEGACY_KERAS=1), "keras3", or None.
KERAS_FLAVOUR, KERAS_VERSION = _keras_flavour()


