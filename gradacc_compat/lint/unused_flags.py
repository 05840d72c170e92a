"""``lint``'s GAC102 for an accumulation flag that is parsed and never
read (``parser.add_argument('--accumulate_gradients', ...)`` or
``flags.DEFINE_integer('grad_accum_steps', ...)`` with no
``args.accumulate_gradients`` anywhere): the script accumulates nothing
and applies every batch, whatever N its user passes.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint.ast_helpers import method, string_of

__all__ = ["never_read"]

_APPLY_CALLS = ("apply_gradients", "minimize")


def never_read(index, report):
    if index.accumulates:
        return  # (the file accumulates: whatever N it reads, the other checks decide)
    flags = [(name, call) for name, call in (_flag(c) for c in index.calls) if name]
    if not flags:
        return
    read = set(n.attr for n in index.nodes if isinstance(n, ast.Attribute)) | set(
        string_of(n) for n in index.nodes if string_of(n) is not None
        and not any(n is call.args[0] for _, call in flags))
    applies = sorted((c for c in index.calls if method(c) in _APPLY_CALLS),
                     key=lambda c: c.lineno)
    for name, call in flags:
        if name not in read and applies:
            report(applies[0], "GAC102", "--" + name, ", a flag parsed and never read")
            return


def _flag(call):
    """``(dest, call)`` for an argparse or absl flag whose name says it
    accumulates, else ``(None, call)``."""
    if not call.args or string_of(call.args[0]) is None:
        return None, call
    text = string_of(call.args[0])
    if method(call) == "add_argument" and text.startswith("--"):
        dest = [string_of(k.value) for k in call.keywords if k.arg == "dest"]
        name = dest[0] if dest and dest[0] else text[2:].replace("-", "_")
    elif (method(call) or "").startswith("DEFINE_"):
        name = text
    else:
        return None, call
    return (name if "accum" in name.lower() else None), call
