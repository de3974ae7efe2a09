"""A fitted estimator in words: its certificate and its rules over named features.

Used by ``exactclf fit`` (the model it saved) and ``exactclf demo`` (the certificate column).
A certificate line states exactly what was proven about the returned model, and says "NOT
proven" whenever a budget, a sampled dictionary or an unconverged solver leaves a gap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["MRC_UPPER_MEANING", "certificate", "describe_model"]

#: what MRCCCG's ``upper_`` bounds, and what it does not
MRC_UPPER_MEANING = (
    "upper_ bounds the worst-case expected 0-1 loss of the MRC's randomized rule "
    "(predict_proba) over the distributions on the training inputs whose feature "
    "expectations match the training data's (within lambda); it is not the error rate of "
    "the deterministic predict, nor a bound on new data"
)


def _estimator(model):
    return model[-1] if hasattr(model, "steps") else model


def certificate(model) -> str:
    """What the fitted exactclf ``model`` (or a pipeline ending in one) proves, in words.

    Empty for a model without a certificate (a baseline, or NGDClassifier).
    """
    from .mrc import MRCCCG

    est = _estimator(model)
    if isinstance(est, MRCCCG):
        text = f"worst-case risk <= {est.upper_:.4f} (randomized rule, training inputs)"
        return text if est.converged_ else text + "; NOT converged (max_iter)"
    if hasattr(est, "dual_gap_"):
        if est.is_optimal_:
            return f"proven optimal (duality gap {est.dual_gap_:.1e})"
        if getattr(est, "arrangements_", "") == "sample":
            return (f"NOT proven optimal: duality gap {est.dual_gap_:.1e} over "
                    f"{est.n_patterns_} sampled arrangement patterns only")
        return f"NOT proven optimal: the solver stopped at duality gap {est.dual_gap_:.1e}"
    if hasattr(est, "is_optimal_") and hasattr(est, "lower_bound_"):
        if est.is_optimal_:
            return "proven optimal"
        return (f"NOT proven optimal: the optimum is between {est.lower_bound_:g} and "
                f"{est.training_errors_:g} training errors")
    return ""


def _linear_form(w: np.ndarray, b: float, names: Sequence[str]) -> str:
    terms = [f"{c:+.6g}*{n}" for c, n in zip(w, names, strict=True) if c != 0]
    return " ".join(terms + [f"{b:+.6g}"])


def _mrc_lines(model) -> list[str]:
    bracket = (f"; the minimax risk R* is in [{model.lower_:.4f}, {model.upper_:.4f}]"
               if math.isfinite(model.lower_) else "")
    lines = [f"minimax risk classifier over {len(model.classes_)} classes, {model.n_iter_} "
             f"LP solves; certified worst-case risk upper_ = {model.upper_:.4f}{bracket}",
             f"    ({MRC_UPPER_MEANING})"]
    if not model.converged_:
        lines.append("NOT converged: max_iter stopped the constraint generation; upper_ holds "
                     "for this classifier, but R* may be lower")
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
                  f"training errors: {model.training_errors_:g} ({certificate(model)})"]
    elif isinstance(model, DeepICEMaxoutClassifier):
        inside, other = (c[1], c[0]) if model.polarity_ == 1 else (c[0], c[1])
        lines.append(f"predict {inside!r} if ANY of:")
        lines += [f"    {_linear_form(h[:-1], h[-1], names)}  > 0" for h in model.hyperplanes_]
        lines += [f"else {other!r}",
                  f"training errors: {model.training_errors_:g} ({certificate(model)})"]
    elif isinstance(model, ThresholdNetLasso):
        lines.append(f"threshold network, {model.n_neurons_} neurons (layer sizes "
                     f"{[w.shape[1] for w in model.hidden_coefs_]}); objective "
                     f"{model.objective_:.6g}, {certificate(model)}")
        if len(model.hidden_coefs_) == 1:
            W, b = model.hidden_coefs_[0], model.hidden_intercepts_[0]
            for k in range(min(W.shape[1], 20)):
                out_w = ", ".join(f"{v:+.4g}" for v in np.atleast_2d(model.coef_)[:, k])
                lines.append(f"    [{out_w}] * 1{{ {_linear_form(W[:, k], b[k], names)} >= 0 }}")
            if W.shape[1] > 20:
                lines.append(f"    ... {W.shape[1] - 20} more")
    elif isinstance(model, MRCCCG):
        lines += _mrc_lines(model)
    elif isinstance(model, NGDClassifier):
        sizes = [model.coefs_[0].shape[0]] + [w.shape[1] for w in model.coefs_]
        lines.append(f"neural network {sizes} ({model.activation}), final training loss "
                     f"{model.loss_:.4g} after {model.n_iter_} iterations (no optimality "
                     "certificate)")
    return "\n".join(lines)
