"""A fitted estimator in words: its certificate and its rules over named features.

Used by ``exactclf fit`` (the model it saved) and ``exactclf demo`` (the certificate column).
A certificate line states exactly what was proven about the returned model, and says "NOT
proven" whenever a budget, a sampled dictionary or an unconverged solver leaves a gap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import numpy as np

from ._certificate import ZERO_ONE_OBJECTIVE

__all__ = ["MRC_UPPER_MEANING", "certificate", "describe_model"]

#: what MRCCCG's ``upper_`` bounds, and what it does not
MRC_UPPER_MEANING = (
    "upper_ bounds the worst-case expected 0-1 loss of the MRC's randomized rule "
    "(predict_proba) over the distributions on the training inputs whose feature "
    "expectations match the training data's (within lambda); it is not the error rate of "
    "the deterministic predict, nor a bound on new data"
)


def _number(x: float) -> str:
    """``x`` exactly, as briefly as it reads back as the same float64 (``3``, ``0.1``,
    ``1700000050.25``): a count of errors printed to six digits is not the count."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def _bound(x: float, up: bool) -> str:
    """``x`` to 4 decimals, rounded outward (``up`` for an upper bound): a bound rounded to
    nearest can claim more than was proven."""
    return str(Decimal(float(x)).quantize(Decimal("0.0001"),
                                          rounding=ROUND_CEILING if up else ROUND_FLOOR))


def _estimator(model):
    return model[-1] if hasattr(model, "steps") else model


def certificate(model) -> str:
    """What the fitted exactclf ``model`` (or a pipeline ending in one) proves, in words,
    read from its ``certificate_`` alone.

    Empty for a model without one (a baseline); "no optimality proof" where the certificate
    has no bound (NGDClassifier).
    """
    cert = getattr(_estimator(model), "certificate_", None)
    if cert is None:
        return ""
    if not math.isfinite(cert.bound):
        return f"no optimality proof ({cert.witness.note})"
    stopped = "" if cert.stop_reason is None else f" ({cert.stop_reason})"
    if cert.objective.startswith("worst-case"):
        text = (f"worst-case risk <= {_bound(cert.value, up=True)} (randomized rule, "
                "training inputs)")
        return text if cert.is_optimal else f"{text}; NOT proven minimax{stopped}"
    if cert.objective.startswith(ZERO_ONE_OBJECTIVE):  # class weights name themselves after it
        if cert.is_optimal:
            return "proven optimal"
        return (f"NOT proven optimal: the optimum is between {_number(cert.bound)} and "
                f"{_number(cert.value)} training errors{stopped}")
    gap = cert.value - cert.bound
    if cert.is_optimal:
        return f"proven optimal (duality gap {gap:.1e})"
    return f"NOT proven optimal: duality gap {gap:.1e}{stopped}: {cert.model_class}"


def _name(name: str) -> str:
    """A column name as a rule prints it: bare when it reads as one word, else quoted (a
    name such as ``income, k$`` or ``x - 1`` would run into the rule around it)."""
    if name.isidentifier() and name.lower() not in {"inf", "infinity", "nan"}:
        return name
    return repr(name)


def _linear_form(w: np.ndarray, b: float, names: Sequence[str]) -> str:
    """``w . x + b`` as text whose numbers read back as the model's own float64 values:
    evaluated as printed, in float64, it is the model's score up to the rounding of the sum.
    (Rounded to six digits, the coefficient of a Unix time, about 1.7e9, moves the boundary
    by more than a spread of 100 s, and the rule misclassifies what the model does not.)"""
    terms = [f"{float(c):+}*{_name(n)}" for c, n in zip(w, names, strict=True) if c != 0]
    return " ".join(terms + [f"{float(b):+}"])


def _mrc_lines(model) -> list[str]:
    cert = model.certificate_
    upper = _bound(cert.value, up=True)
    bracket = (f"; the minimax risk R* is in [{_bound(cert.bound, up=False)}, {upper}]"
               if math.isfinite(cert.bound) else "")
    lines = [f"minimax risk classifier over {len(model.classes_)} classes, {model.n_iter_} "
             f"LP solves; certified worst-case risk upper_ <= {upper}{bracket}",
             f"    ({MRC_UPPER_MEANING})"]
    if cert.stop_reason is not None:
        lines.append(f"NOT converged: the generation stopped ({cert.stop_reason}); upper_ "
                     "holds for this classifier, but R* may be lower")
    return lines


def describe_model(model, names: Sequence[str]) -> str:
    """The fitted ``model`` in readable form: its rules over the feature ``names`` and, on the
    last line(s), its certificate."""
    from . import MRCCCG, DeepICEMaxoutClassifier, ICEClassifier, NGDClassifier, ThresholdNetLasso

    c = model.classes_.tolist()  # Python scalars print as 'yes' or 1, not np.str_('yes')
    lines = []
    if isinstance(model, ICEClassifier):
        lines += [f"predict {c[1]!r} if  {_linear_form(model.coef_[0], model.intercept_[0], names)}"
                  f"  > 0,  else {c[0]!r}",
                  f"training errors: {_number(model.certificate_.value)} "
                  f"({certificate(model)})"]
        k = getattr(model, "max_features", None)
        if k is not None and k < len(names):
            used = [_name(names[j]) for j in np.flatnonzero(model.coef_[0])]
            lines.append(f"features used: {', '.join(used) or 'none'} ({len(used)} of "
                         f"{len(names)}); the proof is over the {model.certificate_.model_class}")
    elif isinstance(model, DeepICEMaxoutClassifier):
        inside, other = (c[1], c[0]) if model.polarity_ == 1 else (c[0], c[1])
        lines.append(f"predict {inside!r} if ANY of:")
        lines += [f"    {_linear_form(h[:-1], h[-1], names)}  > 0" for h in model.hyperplanes_]
        lines += [f"else {other!r}",
                  f"training errors: {_number(model.certificate_.value)} "
                  f"({certificate(model)})"]
    elif isinstance(model, ThresholdNetLasso):
        lines.append(f"threshold network, {model.n_neurons_} neurons (layer sizes "
                     f"{[w.shape[1] for w in model.hidden_coefs_]}); objective "
                     f"{model.certificate_.value:.6g}, {certificate(model)}")
        if len(model.hidden_coefs_) == 1:
            W, b = model.hidden_coefs_[0], model.hidden_intercepts_[0]
            lines.append(f"predict {c[1]!r} if the sum of these terms > 0, else {c[0]!r}:"
                         if len(c) == 2 else
                         f"predict the class of the largest sum of these terms, one weight "
                         f"per class {c}:")
            for k in range(min(W.shape[1], 20)):
                out_w = ", ".join(f"{float(v):+}" for v in np.atleast_2d(model.coef_)[:, k])
                lines.append(f"    [{out_w}] * 1{{ {_linear_form(W[:, k], b[k], names)} >= 0 }}")
            if W.shape[1] > 20:
                lines.append(f"    ... {W.shape[1] - 20} more terms, not shown (the saved "
                             "model has them)")
    elif isinstance(model, MRCCCG):
        lines += _mrc_lines(model)
    elif isinstance(model, NGDClassifier):
        sizes = [model.coefs_[0].shape[0]] + [w.shape[1] for w in model.coefs_]
        lines.append(f"neural network {sizes} ({model.activation}), training objective "
                     f"{model.certificate_.value:.4g} after {model.n_iter_} iterations "
                     f"({certificate(model)})")
    return "\n".join(lines)
