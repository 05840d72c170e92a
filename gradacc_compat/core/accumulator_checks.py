"""The accumulator's checks of a micro-step's arguments, as functions of
its plain state (``accumulator_state.PlainState``): what was received and
what to do, raised before anything is written."""
from __future__ import absolute_import, division, print_function

from gradacc_compat import compat
from gradacc_compat.core.accumulator_ops import is_default
from gradacc_compat.core.checks import (check_gradient, check_sequence, check_weight,
                                        finite_checked, names, runtime_checks)

__all__ = ["check_inputs", "check_strategy"]


def check_strategy(plain, what):
    """Refuses a call under another strategy than the accumulator's."""
    current = compat.get_strategy()
    if current is not plain.strategy:
        raise ValueError(
            "GradientAccumulator.%s was called under %s, but the accumulator "
            "was created under %s. Create the accumulator inside the "
            "`strategy.scope()` of the strategy that runs the training step."
            % (what, type(current).__name__, type(plain.strategy).__name__))


def check_inputs(plain, nonfinite, gradients, variables, weight):
    """Validates a micro-step's arguments against the accumulator's state
    ``plain`` before any state changes; returns ``(gradients, variables,
    weight, run-time checks)``."""
    check_strategy(plain, "accumulate")
    if compat.in_cross_replica_context() and not is_default(plain.strategy):
        raise RuntimeError(
            "GradientAccumulator.accumulate/step must run in replica context: "
            "call it inside strategy.run(...) (experimental_run_v2 or "
            "extended.call_for_each_replica on older TF), not directly under "
            "strategy.scope().")
    gradients = check_sequence(gradients, "gradients", "[grad] or tape.gradient(loss, "
                               "variables)")
    variables = check_sequence(variables, "variables", "[variable] or "
                               "model.trainable_variables")
    if len(gradients) != len(variables):
        raise ValueError(
            "Received %d gradients for %d variables; pass one gradient (or None) "
            "per variable, in the same order as `variables`."
            % (len(gradients), len(variables)))
    if not variables:
        raise ValueError("Received no variables; pass the variables the gradients "
                         "belong to (e.g. model.trainable_variables).")
    for v in variables:
        if not (hasattr(v, "assign") and hasattr(v, "shape") and hasattr(v, "dtype")):
            raise TypeError("Expected variables, received %r (type %s) in `variables`."
                            % (v, type(v).__name__))
    arguments = compat.passed_as_arguments(variables)
    if arguments:
        raise ValueError(
            "GradientAccumulator received variables (%s) that are arguments of the "
            "tf.function being traced. TensorFlow %s reuses such a trace for other "
            "variables of the same shapes, and the accumulator's checks run only while "
            "tracing: another variable list would then receive this list's pending "
            "gradients. Use the variables from the function's closure (e.g. "
            "model.trainable_variables inside the function) instead of passing them in."
            % (names(arguments), compat.TF_VERSION_STRING))
    known = plain.variables
    if known is not None and (len(known) != len(variables)
                              or any(a is not b for a, b in zip(known, variables))):
        raise ValueError(
            "This accumulator was built for %d variables (%s); received %d "
            "variables (%s). Use one GradientAccumulator per variable list."
            % (len(known), names(known), len(variables), names(variables)))
    checked = []
    for g, v in zip(gradients, variables):
        checked.append(check_gradient(g, v))
    if not plain.seen and all(g is None for g in checked):
        raise ValueError(
            "Every gradient passed to this accumulator so far was None (%d variables: "
            "%s); nothing was accumulated. Check that the loss depends on the variables "
            "and that the gradients were computed inside the tape."
            % (len(variables), names(variables)))
    weight = check_weight(weight)
    checked, checks = runtime_checks(checked, variables, weight)
    if nonfinite == "raise":
        checked, finite = finite_checked(checked, variables)
        checks = checks + finite
    return checked, variables, weight, checks
