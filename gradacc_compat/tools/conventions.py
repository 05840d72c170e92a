"""The changes between two trainings that ``replay`` can name: TF 1.x and
Keras conventions (Adam's epsilon, the momentum slot), other optimizer
arguments, a learning-rate schedule that counts other steps, a loss reduced
by sum instead of mean, variables matched by order under other names,
batch-dependent layers. Each reads the two RUN metas; none trains."""
from __future__ import absolute_import, division, print_function

from gradacc_compat.core import audit

__all__ = ["explain", "same_name"]

#: v1 AdamOptimizer's and Keras Adam's default epsilon.
_EPSILONS = {1e-8: "v1 AdamOptimizer's default", 1e-7: "Keras Adam's default"}


def explain(run, here, first):
    """``(causes, notes)``: causes when the trainings part (``first``, the
    first parted row), notes that hold whatever the verdict."""
    found = []  # (is a cause when they part, text)
    found.extend(_optimizer(run["optimizer"], here["optimizer"]))
    found.extend(_learning_rates(run, here))
    found.extend(_loss_scale(run, here))
    if first is not None and not same_name(first["variable"], first["here"]):
        old, new = first["variable"], first["here"]
        found.append((True, "variables were paired by order: the RUN's %r with %r here. If "
                            "the port created its variables in another order (same shapes), "
                            "pass --map %s=<its name here> (mapping= in gac.replay)"
                      % (old, new, old)))
    if run["steps"] != here["steps"]:  # micro-batches of another size
        for layer, cls, kind in [tuple(f) for f in here.get("batch_dependent", [])]:
            found.append((True, " ".join(audit.explain([(layer, cls, kind)]))))
    causes = [text for cause, text in found if cause] if first is not None else []
    notes = [text for cause, text in found if not cause or first is None]
    return causes, notes


def same_name(a, b):
    """One variable's name in both: equal, or one is the other under a
    model's scope (``hidden/kernel``, Keras 3's ``sequential/hidden/kernel``)."""
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _optimizer(run, here):
    out = []
    if (run["class"], run["family"]) != (here["class"], here["family"]):
        text = "optimizer: the RUN used %s (%s), here %s (%s)" % (
            run["class"], run["family"], here["class"], here["family"])
        momentum = ("momentum" in run["hyperparameters"] or "Momentum" in run["class"],
                    "momentum" in here["hyperparameters"] or "Momentum" in here["class"])
        if all(momentum) and "v1-train" in (run["family"], here["family"]) \
                and run["family"] != here["family"]:
            text += (". v1 MomentumOptimizer keeps the sum of gradients in its slot and steps "
                     "by lr times it; Keras SGD(momentum=) keeps the step itself, lr folded "
                     "in. Their weights agree while the learning rate is constant (the slots "
                     "are not compared: they hold different things) and part from the first "
                     "step where it changes (a schedule, warmup)")
        out.append((_algorithm(run["class"]) != _algorithm(here["class"]), text))
    hyper_run, hyper_here = run["hyperparameters"], here["hyperparameters"]
    for key in sorted(set(hyper_run) & set(hyper_here)):
        a, b = hyper_run[key], hyper_here[key]
        if a == b or (isinstance(a, float) and isinstance(b, float)
                      and abs(a - b) <= 1e-6 * max(abs(a), abs(b))):  # float32 round-off
            continue
        if key == "epsilon" and _default(a) and _default(b):
            a, b = _default(a), _default(b)
            out.append((True, "Adam's epsilon: %g in the RUN (%s), %g here (%s). The two "
                              "APIs' defaults differ; a step moves a weight by lr * m / "
                              "(sqrt(v) + epsilon), so they part by about lr * 9e-8 / sqrt(v) "
                              "per step: visible where gradients are near 1e-7 or smaller. "
                              "Pass epsilon=%g to the port to agree"
                        % (a, _EPSILONS[a], b, _EPSILONS[b], a)))
        else:
            out.append((True, "optimizer argument %s: %r in the RUN, %r here" % (key, a, b)))
    return out


def _algorithm(name):
    """``AdamOptimizer`` and ``Adam`` are one algorithm, so are v1
    ``MomentumOptimizer`` / ``GradientDescentOptimizer`` and Keras ``SGD``."""
    name = name[:-len("Optimizer")] if name.endswith("Optimizer") else name
    return {"GradientDescent": "SGD", "Momentum": "SGD"}.get(name, name)


def _default(epsilon):
    """The default epsilon ``epsilon`` is (within float32 round-off), or None."""
    for value in _EPSILONS:
        if isinstance(epsilon, float) and abs(epsilon - value) <= 1e-6 * value:
            return value
    return None


def _learning_rates(run, here):
    a, b = run.get("learning_rates") or [], here.get("learning_rates") or []
    for k, (x, y) in enumerate(zip(a, b)):
        if x is None or y is None or abs(x - y) <= 1e-6 * max(abs(x), abs(y)):
            continue
        if k == 0:
            return [(True, "learning rate: %g in the RUN, %g here, from the first step"
                     % (x, y))]
        return [(True, "learning rate: equal at first, then %g in the RUN and %g here at "
                       "effective step %d: the schedule counts other steps. Under "
                       "accumulation the optimizer's step counts effective steps (one per "
                       "%d micro-batches): a schedule converted to micro-steps (decay, warmup "
                       "or total steps multiplied by %d) runs %d times slower; count it in "
                       "effective steps" % (x, y, k + 1, here["steps"], here["steps"],
                                            here["steps"]))]
    return []


def _loss_scale(run, here):
    """The first step's loss is taken at the same initial weights on the same
    examples: a ratio other than 1 is the loss itself."""
    lr_run, lr_here = run.get("first_loss"), here.get("first_loss")
    if not lr_run or not lr_here:
        return []
    ratio = lr_here / lr_run
    if abs(ratio - 1.0) <= 1e-4:
        return []
    sizes = {here["micro_batch"]: "a micro-batch here",
             run["micro_batch"]: "a batch of the RUN",
             here["micro_batch"] * here["steps"]: "the effective batch"}
    for size, what in sorted(sizes.items()):
        for r, way in ((ratio, "summed here, averaged in the RUN"),
                       (1.0 / ratio, "averaged here, summed in the RUN")):
            if size > 1 and abs(r - size) <= 1e-3 * size:
                return [(True, "loss: %.6g times the RUN's at the same weights and examples "
                               "(%d, %s): the loss is %s. A summed loss makes each "
                               "micro-batch's gradient %d times the mean's; reduce by mean "
                               "(Keras losses and tf.compat.v1.losses do by default; "
                               "tf.reduce_sum does not), or use "
                               "GradientAccumulator(reduction='sum') when the big batch sums"
                         % (ratio, size, what, way, size))]
    return [(True, "loss: %.6g times the RUN's at the same weights and examples: the two "
                   "compute a different loss (function, reduction or regularization; with "
                   "sample weights, tf.compat.v1.losses divide by the count of non-zero "
                   "weights, Keras losses by the batch size)" % ratio)]
