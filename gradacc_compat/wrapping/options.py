"""``gac.wrap``'s options: which are configuration, and which belong on the
optimizer being wrapped."""
from __future__ import absolute_import, division, print_function

from gradacc_compat.core.checks import check_nonfinite, check_reduction, check_transform
from gradacc_compat.wrapping.base import describe

__all__ = ["OPTIONS", "check_options"]

#: wrap()'s options that are configuration (get_config keeps them);
#: ``transform`` is code: accepted, passed on, not kept in a config.
OPTIONS = ("reduction", "name", "nonfinite", "clip_global_norm")
ACCEPTED = OPTIONS + ("transform",)
# Arguments users pass to wrap() that belong to the optimizer being wrapped.
INNER_ARGUMENTS = (
    "learning_rate", "lr", "clipnorm", "clipvalue", "global_clipnorm",
    "weight_decay", "use_ema", "ema_momentum", "ema_overwrite_frequency",
    "momentum", "nesterov", "beta_1", "beta_2", "epsilon", "amsgrad", "decay",
    "loss_scale_factor", "gradient_accumulation_steps", "jit_compile",
    "use_locking", "global_step",
)


def check_options(optimizer, options):
    for key in options:
        if key in ACCEPTED:
            continue
        if key in INNER_ARGUMENTS:
            raise TypeError(
                "gac.wrap(..., %s=%r): `%s` belongs on the optimizer being wrapped, "
                "not on the wrapper. Received optimizer %s; create it with %s=... "
                "and wrap that." % (key, options[key], key, describe(optimizer), key))
        raise TypeError("gac.wrap() got an unexpected option %r (accepted: %s). Received "
                        "optimizer %s." % (key, ", ".join(ACCEPTED), describe(optimizer)))
    try:
        if "reduction" in options:
            check_reduction(options["reduction"])
        if "nonfinite" in options:
            check_nonfinite(options["nonfinite"])
        check_transform(options.get("transform"), options.get("clip_global_norm"))
    except (TypeError, ValueError) as err:
        raise type(err)("gac.wrap: %s Wrapping %s." % (err, describe(optimizer)))
