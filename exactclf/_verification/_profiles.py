"""What :func:`exactclf.verify` holds each estimator's certificate to, derived from the
estimator's class alone: the objective it must state, how its value is re-computed from the
model, which witness kinds can prove its bound, and the tolerance of an optimality claim.

Nothing here is read from the certificate under test.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._certificate import (
    LASSO_OBJECTIVES,
    MRC_OBJECTIVES,
    NGD_OBJECTIVE,
    ZERO_ONE_OBJECTIVE,
    class_weighted,
)
from ._lasso import lasso_objective
from ._mrc import mrc_terms
from ._tolerances import LASSO_RTOL, MRC_RTOL, zero_one_rtol

__all__ = ["Profile", "Value", "profile_of"]

_EPS = np.finfo(np.float64).eps


@dataclass(frozen=True)
class Value:
    """An objective re-computed from the model; how far a correct certificate's value may
    lie from it (the rounding of the two computations); and the scale an optimality
    tolerance is relative to (the value itself, or for a Lasso the zero network's loss)."""

    value: float
    atol: float
    scale: float


@dataclass(frozen=True)
class Profile:
    """What a certificate of one estimator class must say, and how it is re-checked.

    ``objective(model)``: the wording of ``Certificate.objective``; ``value(model, X, y,
    w)``: the :class:`Value` re-computed; ``witnesses``: the witness kinds that can prove a
    bound of this class (``"none"``: a bound the certificate states without evidence);
    ``optimality_rtol(kind, w)``: how far ``bound`` may lie below ``value`` in an optimality
    claim, relative to ``Value.scale``, by the witness ``kind`` and the weights ``w``; None
    when the estimator proves nothing (a local method).
    """

    objective: Callable[[object], str]
    value: Callable[..., Value]
    witnesses: frozenset[str]
    optimality_rtol: Callable[[str, np.ndarray], float | None]


def _zero_one_value(model, X, y, w) -> Value:
    """The weighted training errors of ``model``'s predictions, summed exactly rounded
    (``math.fsum``); the fit's own sum, in another order, lies within ``n eps`` of it
    (exactly equal for integer weights below ``2**53``)."""
    wrong = np.asarray(model.predict(X)).ravel() != np.asarray(y).ravel()
    value = math.fsum(w[wrong].tolist())
    return Value(value, max(len(w) * _EPS, 1e-12) * value, value)


def _mrc_value(model, X, y, w) -> Value:
    terms = mrc_terms(model, X, y, w)
    return Value(terms.R, terms.atol, abs(terms.R))


def _lasso_value(model, X, y, w) -> Value:
    value, loss0 = lasso_objective(model, X, y, w)
    return Value(value, 1e-9 * max(loss0, abs(value)), loss0)


_ACTIVATIONS = {
    "identity": lambda z: z,
    "logistic": lambda z: 0.5 * (1.0 + np.tanh(0.5 * z)),
    "tanh": np.tanh,
    "relu": lambda z: np.maximum(z, 0.0),
}


def _ngd_value(model, X, y, w) -> Value:
    """The network's training objective from its weights, in float64 (a stable
    cross-entropy from the logits)."""
    A = X
    for W, b in zip(model.coefs_[:-1], model.intercepts_[:-1], strict=True):
        A = _ACTIVATIONS[model.activation](np.asarray(A @ np.asarray(W, np.float64))
                                           + np.asarray(b, np.float64))
    Z = np.asarray(A @ np.asarray(model.coefs_[-1], np.float64)) + np.asarray(
        model.intercepts_[-1], np.float64)
    classes = np.asarray(model.classes_)
    idx = np.searchsorted(classes, np.asarray(y).ravel())
    if Z.shape[1] == 1:  # logistic output: log(1 + exp(z)) - t z
        ce = np.logaddexp(0.0, Z[:, 0]) - (idx == 1) * Z[:, 0]
    else:
        top = Z.max(axis=1)
        ce = top + np.log(np.exp(Z - top[:, None]).sum(axis=1)) - Z[np.arange(len(Z)), idx]
    reg = 0.5 * model.alpha * sum(float(np.sum(np.asarray(W, np.float64) ** 2))
                                  for W in model.coefs_)
    total = float(w.sum())
    value = (float(w @ ce) + reg) / (total if total > 0 else 1.0)
    # a network trained in float32 computed its objective in float32
    single = any(np.asarray(W).dtype == np.float32 for W in model.coefs_)
    return Value(value, (1e-5 if single else 1e-9) * max(abs(value), 1e-300), abs(value))


def _zero_one_objective(model) -> str:
    return class_weighted(ZERO_ONE_OBJECTIVE, getattr(model, "class_weight", None))


def _lasso_objective_text(model) -> str:
    return class_weighted(LASSO_OBJECTIVES[getattr(model, "loss", "squared")],
                          getattr(model, "class_weight", None))


#: estimator class name -> its profile (subclasses use their nearest listed base's)
PROFILES: dict[str, Profile] = {
    "ICEClassifier": Profile(_zero_one_objective, _zero_one_value,
                             frozenset({"none", "conflicts", "iis_cover"}),
                             zero_one_rtol),
    "DeepICEMaxoutClassifier": Profile(_zero_one_objective, _zero_one_value,
                                       frozenset({"none", "conflicts", "maxout_cover"}),
                                       zero_one_rtol),
    "MRCCCG": Profile(lambda model: MRC_OBJECTIVES[model.loss], _mrc_value,
                      frozenset({"none", "mrc_dual"}), lambda kind, w: MRC_RTOL),
    "NGDClassifier": Profile(lambda model: NGD_OBJECTIVE, _ngd_value, frozenset({"none"}),
                             lambda kind, w: None),
}
for _name in ("ThresholdNetLasso", "ThresholdNetLassoRegressor", "ThresholdNetLassoCV",
              "ThresholdNetLassoRegressorCV"):
    PROFILES[_name] = Profile(_lasso_objective_text, _lasso_value,
                              frozenset({"none", "lasso_dual"}), lambda kind, w: LASSO_RTOL)


def profile_of(model) -> Profile | None:
    """The profile of ``model``'s class or of its nearest base class that has one."""
    for cls in type(model).__mro__:
        if cls.__name__ in PROFILES and cls.__module__.startswith("exactclf"):
            return PROFILES[cls.__name__]
    return None
