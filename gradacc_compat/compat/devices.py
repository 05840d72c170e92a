"""Devices for tests, the benchmark and the demo: logical CPUs (TF2) or a
TF1 session config, the devices TF sees, and environment flags."""
from __future__ import absolute_import, division, print_function

import os

from gradacc_compat.compat.facts import TF1, TF_VERSION_STRING, tf

__all__ = [
    "visible_devices", "split_cpu", "tf1_session_config", "env_flag",
]




def visible_devices():
    """Names of the devices TF can place ops on (logical devices)."""
    try:
        return [d.name for d in tf.config.experimental.list_logical_devices()]
    except AttributeError:  # 1.14 graph: no tf.config.experimental listing
        from tensorflow.python.client import device_lib
        return [d.name for d in device_lib.list_local_devices()]


def split_cpu(count):
    """Make ``count`` logical CPU devices (TF2 only; before any op runs).

    TF1 needs ``tf1_session_config(count)`` instead, given to the Session or to
    ``enable_eager_execution(config=...)``.  Do not pass a config to
    enable_eager_execution on TF2 (it errors on 2.0 and hangs on 2.15+).
    """
    if TF1:
        raise RuntimeError("split_cpu is for TF2; on TF %s use "
                           "tf1_session_config(%d)" % (TF_VERSION_STRING, count))
    cpus = tf.config.experimental.list_physical_devices("CPU")
    configs = [tf.config.experimental.VirtualDeviceConfiguration()
               for _ in range(count)]
    # set_virtual_device_configuration exists on every 2.x; the non-
    # experimental set_logical_device_configuration only from 2.1.
    tf.config.experimental.set_virtual_device_configuration(cpus[0], configs)


def tf1_session_config(cpu_count=1):
    return tf.compat.v1.ConfigProto(device_count={"CPU": cpu_count},
                                    allow_soft_placement=True)


def env_flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
