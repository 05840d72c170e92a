"""``show_versions()``: what a bug report needs."""
from __future__ import absolute_import, print_function

import platform
import sys

from gradacc_compat import compat
from gradacc_compat.core import families
from gradacc_compat._version import __version__
from gradacc_compat.compat import tf


def _optimizer_samples():
    """One instance per optimizer family this TF offers, with its label."""
    samples = [("tf.compat.v1.train.Optimizer", lambda: tf.compat.v1.train.GradientDescentOptimizer(0.1))]
    keras = compat.keras_module()
    if keras is not None:
        samples.append(("tf.keras.optimizers (%s)" % compat.KERAS_FLAVOUR,
                        lambda: keras.optimizers.SGD(0.1)))
        legacy = compat.keras_legacy_optimizers()
        if legacy is not None:
            samples.append(("tf.keras.optimizers.legacy", lambda: legacy.SGD(0.1)))
    return samples


def versions():
    """The facts ``show_versions`` prints, as ``[(key, value)]``."""
    rows = [
        ("gradacc_compat", __version__),
        ("python", "%s (%s)" % (platform.python_version(), sys.executable)),
        ("tensorflow", compat.TF_VERSION_STRING),
        ("keras", "%s %s" % (compat.KERAS_FLAVOUR, compat.KERAS_VERSION or "")),
        ("mode", "eager by default" if compat.eager_by_default() else "graph by default"),
        ("tf.contrib.distribute", "yes" if compat.HAS_CONTRIB_DISTRIBUTE else "no"),
        ("tf.estimator", "yes" if compat.HAS_ESTIMATOR else "no"),
        ("replica runner", "strategy." + compat.REPLICA_RUNNER),
        ("devices", ", ".join(compat.visible_devices())),
    ]
    for label, make in _optimizer_samples():
        try:
            adapter = families.adapter_for(make()).name
        except Exception as err:  # report, never crash a bug report
            adapter = "unavailable (%s)" % (err,)
        rows.append(("adapter for " + label, adapter))
    return rows


def show_versions(file=None):
    """Prints Python, TF, Keras flavour, mode, devices and adapters."""
    out = file or sys.stdout
    rows = versions()
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print("%s : %s" % (key.ljust(width), value), file=out)
