"""Where the ``gac.wrap`` subclasses of Keras optimizers live, by name.

``gac.wrap`` makes ``Accumulating<Name>`` at run time, one per optimizer
class, and binds each one here, so ``pickle`` (and anything else that finds
a class by its qualified name, such as Keras 3's own pickling of optimizers)
finds ``gradacc_compat.keras_classes.AccumulatingAdam`` -- also in a fresh
process that has not wrapped anything yet: asking this module for a name it
does not have makes the wrapper classes of every optimizer in
``tf.keras.optimizers`` (and ``.legacy``) first.

Wrappers of your own optimizer classes are bound here when you first wrap
one; unpickling them needs that process to have wrapped that class too.
"""
from __future__ import absolute_import, division, print_function

import importlib
import sys


def _make_all():
    # (``from gradacc_compat import wrap`` would give the function.)
    importlib.import_module("gradacc_compat.wrap").keras_custom_objects()


def __getattr__(name):  # module __getattr__: Python >= 3.7 (PEP 562)
    if name.startswith("Accumulating"):
        _make_all()
        if name in globals():
            return globals()[name]
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


# TODO: remove when Python 2.7 (TF 1.14) is no longer supported: without a
# module __getattr__, the classes are made when this module is imported
# (pickle imports it first).
if sys.version_info < (3, 7):
    _make_all()
