"""``lint``'s GAC109 where a TF1 graph's update is decided by a value fed
to it (``feed_dict[model.skip_update_ph] = step % N != 0``) from a Python
counter made 0 and advanced after the feed.

Standard library only: ``lint`` runs without TensorFlow.
"""
from __future__ import absolute_import, division, print_function

import ast

from gradacc_compat.lint import counters
from gradacc_compat.lint.ast_helpers import dotted_name
from gradacc_compat.lint.exprs import modulo_tested

__all__ = ["fed_decisions"]

_DECIDES = ("skip", "apply", "update", "accumulate_only")


def fed_decisions(index, report):
    """GAC109 where the apply is decided by a value fed to the graph
    (``feed_dict[model.skip_update_ph] = step % N != 0``) from a Python
    counter made 0 and advanced after the feed: step 0 applies after one
    micro-batch, before the regular cycles start."""
    for node in index.assigns:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Subscript)):
            continue
        key = node.targets[0].slice
        if type(key).__name__ == "Index":  # (Python < 3.9)
            key = key.value
        name = (dotted_name(key) or "").split(".")[-1].lower()
        modulo = modulo_tested(node.value, (ast.Eq, ast.NotEq))
        if not any(word in name for word in _DECIDES) or modulo is None \
                or not isinstance(modulo.left, ast.Name):
            continue
        counter = modulo.left.id
        if counters.made_zero_advanced_after(index, counter, node):
            report(node, "GAC109", "`%s %% N` decides the update fed to `%s` with `%s` made 0 "
                   "and advanced after it: the first update comes after one micro-batch"
                   % (counter, name, counter))
