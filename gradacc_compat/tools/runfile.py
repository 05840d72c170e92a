"""A recorded training run on disk: ONE ``.npz`` file (NumPy arrays, no
pickle) whose ``__meta__`` entry is UTF-8 JSON. Python 2.7 + NumPy 1.16
writes what Python 3.13 + NumPy 2 reads, and the reverse."""
from __future__ import absolute_import, division, print_function

import io
import json
import zipfile

import numpy as np

__all__ = ["RunFileError", "write", "read", "FORMAT", "VERSION"]

FORMAT = "gradacc_compat.run"
VERSION = 1
_META = "__meta__"


class RunFileError(ValueError):
    """A RUN file that cannot be read: not a run, truncated, corrupt, or of
    a newer format."""


def write(path, meta, arrays):
    """Writes ``meta`` (JSON-able) and ``arrays`` (name -> array) to ``path``."""
    meta = dict(meta, format=FORMAT, version=VERSION)
    payload = dict((name, np.asarray(value)) for name, value in arrays.items())
    for name, value in payload.items():
        if value.dtype == object:
            raise TypeError("RUN arrays must be numbers; %r is %r" % (name, value))
    text = json.dumps(meta, sort_keys=True).encode("utf-8")
    payload[_META] = np.frombuffer(text, dtype=np.uint8)
    with io.open(path, "wb") as f:
        np.savez(f, **payload)


def read(path):
    """``(meta, arrays)`` from ``path``; RunFileError says what is wrong."""
    what = ("Record the run again (python -m gradacc_compat record ... --out %s); "
            "a RUN file is one .npz written whole by `record`." % (path,))
    try:
        with io.open(path, "rb") as f:
            data = f.read()
    except (IOError, OSError) as err:
        raise RunFileError("cannot read the RUN file %s: %s" % (path, err))
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise RunFileError("%s is not a readable RUN file (%d bytes): it is truncated or "
                           "corrupt (no zip directory at its end). %s" % (path, len(data), what))
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            names = list(npz.files)
            if _META not in names:
                raise RunFileError("%s is a .npz file but not a gradacc_compat run: it has no "
                                   "%s entry (it holds %s). %s"
                                   % (path, _META, ", ".join(sorted(names)[:5]) or "nothing",
                                      what))
            arrays = dict((name, npz[name]) for name in names if name != _META)
            meta = json.loads(bytes(npz[_META].tobytes()).decode("utf-8"))
    except RunFileError:
        raise
    except (zipfile.BadZipfile, ValueError, EOFError, IOError, OSError, KeyError) as err:
        raise RunFileError("%s is not a readable RUN file (%d bytes): it is truncated or "
                           "corrupt (%s: %s). %s"
                           % (path, len(data), type(err).__name__, err, what))
    if meta.get("format") != FORMAT:
        raise RunFileError("%s is not a gradacc_compat run (format %r). %s"
                           % (path, meta.get("format"), what))
    if int(meta.get("version", 0)) > VERSION:
        raise RunFileError("%s was written by a newer gradacc_compat (RUN format %s; this "
                           "one reads up to %d): upgrade gradacc_compat where you replay."
                           % (path, meta.get("version"), VERSION))
    return meta, arrays
