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

This module imports nothing of the package: ``gradacc_compat.wrapping``
hands it the function that makes the classes when it loads, and the
package's face hands it a loader of ``gradacc_compat.wrapping`` for a
lookup that comes first (unpickling in a fresh process: the package loads
its names on first use).
"""
from __future__ import absolute_import, division, print_function

import sys

_MAKERS = []
_LOADERS = []


def register_loader(load):
    """``load()`` loads the module that registers the makers."""
    _LOADERS.append(load)


def register_maker(make_all):
    """``make_all()`` makes and binds every wrapper class here. Without a
    module ``__getattr__`` (Python < 3.7: TF 1.14 on 2.7) it runs now."""
    _MAKERS.append(make_all)
    if sys.version_info < (3, 7):  # TODO: drop with Python 2.7 (TF 1.14)
        make_all()


def __getattr__(name):  # module __getattr__: Python >= 3.7 (PEP 562)
    if name.startswith("Accumulating"):
        if not _MAKERS:
            for load in _LOADERS:
                load()
        for make_all in _MAKERS:
            make_all()
        if name in globals():
            return globals()[name]
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
