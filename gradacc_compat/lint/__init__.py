"""``gradacc-lint PATH...`` (``python -m gradacc_compat.lint``): hand-rolled
gradient accumulation mistakes in Python sources, read with ``ast`` (nothing
is run, TensorFlow is not imported). See ``rules`` for the codes."""
from __future__ import absolute_import

from gradacc_compat.lint.rules import CODES, SUGGESTION, Finding, lint_paths, lint_source, main

__all__ = ["CODES", "Finding", "lint_source", "lint_paths", "main", "SUGGESTION"]
