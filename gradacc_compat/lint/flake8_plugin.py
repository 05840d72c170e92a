"""``gradacc-lint`` as a flake8 plugin (entry point ``flake8.extension``:
``GAC``): the same findings, the same codes (``GAC101`` ...), ``# noqa:
GAC101`` handled by flake8 itself.

    pip install gradacc_compat flake8
    flake8 --select=GAC src/

Standard library only: no TensorFlow is imported.
"""
from __future__ import absolute_import

from gradacc_compat._version import __version__
from gradacc_compat.lint.rules import findings_of_tree

__all__ = ["Plugin"]


class Plugin(object):
    """flake8 hands each file's tree and lines; this yields its findings."""

    name = "gradacc-lint"
    version = __version__

    def __init__(self, tree, lines=None):
        self.tree = tree
        self.lines = lines or []

    def run(self):
        for finding in findings_of_tree(self.tree, "".join(self.lines), noqa=False):
            yield finding.line, finding.col, "%s %s" % (finding.code, finding.message), Plugin
