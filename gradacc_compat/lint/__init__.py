"""``python -m gradacc_compat.lint PATH...``: hand-rolled accumulation
mistakes in Python sources, read with ``ast`` (nothing is run)."""
from __future__ import absolute_import

from gradacc_compat.lint.rules import SUGGESTION, Finding, lint_paths, lint_source, main

__all__ = ["Finding", "lint_source", "lint_paths", "main", "SUGGESTION"]
