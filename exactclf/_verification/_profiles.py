"""What :func:`exactclf.verify` holds each estimator's certificate to, derived from the
estimator's class alone: the objective it must state, how its value is re-computed from the
model, which witness kinds can prove its bound, the tolerance of an optimality claim and,
where the class constrains its models (``ICEClassifier(max_features=k)``), the model class
the certificate must name and the check that the model is in it.

Nothing here is read from the certificate under test. The checker of the ``feature_subsets``
witness (:func:`check_feature_subsets`) lives here too: it re-derives, for every subset of
``k`` features, the bounds that need no witness and re-checks the subsets' own witnesses.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from .._certificate import (
    LASSO_OBJECTIVES,
    MRC_OBJECTIVES,
    NGD_OBJECTIVE,
    ZERO_ONE_OBJECTIVE,
    Witness,
    class_weighted,
)
from ._conflicts import conflict_sum
from ._iis import check_iis_cover
from ._lasso import lasso_objective
from ._mrc import mrc_terms
from ._signs import monotone_signs
from ._tolerances import ENUMERATION_RTOL, LASSO_RTOL, MRC_RTOL, integral_weights, zero_one_rtol

__all__ = ["Profile", "Value", "affine_model_class", "check_feature_subsets",
           "monotone_signs", "profile_of"]

#: the models of an unconstrained ICEClassifier's certificate
AFFINE = "affine classifiers (sign(w.x + b))"

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
    #: ``model_class(model)``: the wording ``Certificate.model_class`` must have (None: the
    #: wording is not held to one); ``constraint(model)``: whether the model is in that
    #: class, with what was compared (None: nothing to check)
    model_class: Callable[[object], str] | None = None
    constraint: Callable[[object], tuple[bool, str] | None] | None = None


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


def affine_model_class(max_features: int | None, n_features: int,
                       signs: np.ndarray | None = None) -> str:
    """The models an ICEClassifier's certificate ranges over: the affine classifiers, using at
    most ``max_features`` of the ``n_features`` features where that is a constraint, with the
    coefficients' ``signs`` (one of -1, 0, 1 per feature, ``monotonic_cst``) where some are
    asked for.

    Examples
    --------
    >>> affine_model_class(None, 4)
    'affine classifiers (sign(w.x + b))'
    >>> affine_model_class(2, 4)
    'affine classifiers (sign(w.x + b)) using at most 2 of the 4 features'
    >>> affine_model_class(5, 4) == affine_model_class(None, 4)
    True
    >>> affine_model_class(None, 4, np.array([1, 0, -1, 1]))
    'affine classifiers (sign(w.x + b)) with w[j] >= 0 for j in [0, 3] and w[j] <= 0 for j in [2]'
    """
    text = AFFINE
    if max_features is not None and max_features < n_features:
        text += f" using at most {max_features} of the {n_features} features"
    if signs is not None and np.any(signs):
        signs = np.asarray(signs)
        parts = [f"w[j] {op} 0 for j in {np.flatnonzero(pick).tolist()}"
                 for op, pick in ((">=", signs > 0), ("<=", signs < 0)) if pick.any()]
        text += " with " + " and ".join(parts)
    return text


def _max_features(model, n_features: int) -> int:
    """The size of the feature subsets of ``model``'s class (all features when it has no
    ``max_features`` or it does not constrain)."""
    k = getattr(model, "max_features", None)
    return n_features if k is None else min(int(k), n_features)


def _ice_model_class(model) -> str:
    return affine_model_class(getattr(model, "max_features", None), model.n_features_in_,
                              monotone_signs(model))


def _ice_constraints(model) -> tuple[bool, str] | None:
    """Whether ``coef_`` has at most ``max_features`` nonzero entries and the signs of
    ``monotonic_cst`` (None when the model has neither constraint)."""
    coef = np.asarray(model.coef_, dtype=np.float64).ravel()
    held, said = [], []
    k = getattr(model, "max_features", None)
    if k is not None:
        used = int(np.count_nonzero(coef))
        held.append(used <= k)
        said.append(f"coef_ has {used} nonzero entries, max_features={k}")
    signs = monotone_signs(model)
    if signs is not None:
        wrong = np.flatnonzero(signs * coef < 0).tolist()
        held.append(not wrong)
        said.append(f"coef_ has the signs of monotonic_cst except at features {wrong}"
                    if wrong else "coef_ has the signs of monotonic_cst")
    return (all(held), "; ".join(said)) if held else None


def _one_feature_minimum(x: np.ndarray, positive: np.ndarray, w: np.ndarray,
                         sign: int = 0) -> float:
    """The least weighted errors of a rule on one feature, ``sign(s (x - t))`` or a
    constant, over every ``t`` and every ``s`` of the ``sign`` asked (0: either): a cut
    between consecutive distinct values (or none) with either side positive. Summed
    exactly (in float64 for integer weights, whose sums are exact; else as fractions) and
    rounded once.

    Examples
    --------
    >>> _one_feature_minimum(np.array([0.0, 1, 2, 3]), np.array([0, 1, 0, 1], bool),
    ...                      np.array([1.0, 1, 1, 1]))
    1.0
    """
    order = np.argsort(x + 0.0, kind="stable")
    xs, ps, ws = x[order] + 0.0, positive[order], w[order]
    cuts = np.r_[np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]]), len(xs)]
    pos_w, neg_w = np.where(ps, ws, 0.0), np.where(ps, 0.0, ws)
    if integral_weights(ws):
        P, N = np.r_[0.0, np.cumsum(pos_w)][cuts], np.r_[0.0, np.cumsum(neg_w)][cuts]
    else:
        P = np.array(list(itertools.accumulate(map(Fraction, pos_w.tolist()),
                                               initial=Fraction(0))), dtype=object)[cuts]
        N = np.array(list(itertools.accumulate(map(Fraction, neg_w.tolist()),
                                               initial=Fraction(0))), dtype=object)[cuts]
    # positive above the cut: the positives below it err, and the negatives above it
    above = P + (N[-1] - N)
    below = N + (P[-1] - P)
    # a sign asked leaves the other way only its constant rules (no cut)
    above = above if sign >= 0 else above[[0, -1]]
    below = below if sign <= 0 else below[[0, -1]]
    return float(min(min(above), min(below)))


def check_feature_subsets(model, cert, X, y, w, report, rtol) -> tuple[float, float] | None:
    """The bound of an ICEClassifier with ``max_features=k``: the least over every subset
    ``S`` of ``k`` features of a bound on the best rule on ``S`` alone.

    For every subset it re-derives the conflicting duplicates of ``X[:, S]`` (and for
    ``k = 1`` the exact optimum of the feature, :func:`_one_feature_minimum`); a subset the
    witness lists (``{"features", "bound", "method", "witness": {"kind", "data"}}``) adds
    its own witness: an ``"iis_cover"`` one is re-checked on ``X[:, S]`` (see
    :func:`~exactclf._verification._iis.check_iis_cover`), a ``"none"`` one (an
    enumeration) is taken as claimed and named under ``not_checked`` when the certificate's
    bound needs it. Returns the bound and its slack, as the other checkers."""
    entries = cert.witness.data.get("subsets")
    n = X.shape[1]
    k = _max_features(model, n)
    listed = _listed_subsets(entries, k, n)
    if isinstance(listed, str):
        report.add("feature subsets witness", False, listed)
        return None
    positive = np.asarray(y).ravel() == model.classes_[1]
    signs = monotone_signs(model)
    signs = np.zeros(n, dtype=int) if signs is None else signs
    sub_report = type(report)()
    checked, trusted, n_iis = [], [], 0
    for S in itertools.combinations(range(n), k):
        cols = list(S)
        value = (_one_feature_minimum(X[:, S[0]], positive, w, signs[S[0]]) if k == 1
                 else conflict_sum(X[:, cols], y, w))
        proofs = [(value, ENUMERATION_RTOL * value)]
        claim = 0.0
        if S in listed:
            bound, kind, data = listed[S]
            if kind == "iis_cover":
                n_iis += 1
                sub = replace(cert, bound=bound, witness=Witness("iis_cover", "", data))
                got = check_iis_cover(model, sub, X[:, cols], y, w, sub_report, rtol,
                                      signs[cols])
                proofs += [] if got is None else [got]
            elif kind == "none":
                claim = bound
        best = max(proofs, key=sum)
        checked.append(best)
        trusted.append(max(sum(best), claim))
    failed = [c for c in sub_report.checks if not c.passed]
    report.add("feature subsets", not failed,
               f"{len(checked)} subsets of {k} of {n} features: "
               + ("the exact optimum of each feature" if k == 1 else
                  "the conflicting duplicates of each projection")
               + f" re-derived, {n_iis} IIS cover witnesses re-checked on their projections"
               + (f"; {failed[0].name}: {failed[0].detail}" if failed else ""))
    low = min(checked, key=sum)
    if cert.bound <= sum(low) or min(trusted) <= sum(low):
        return low
    unchecked = sum(1 for t, c in zip(trusted, checked, strict=True) if t > sum(c))
    report.not_checked.append(
        f"the bounds of {unchecked} of the {len(checked)} feature subsets (their "
        "exhaustive searches, or other bounds without a compact witness), taken as claimed; "
        f"re-derived alone the subsets prove {low[0]!r}")
    return min(trusted), 0.0


def _listed_subsets(entries, k: int, n: int) -> dict | str:
    """The subsets of a ``feature_subsets`` witness by their features: ``(bound, kind,
    data)`` each, or why the list is malformed."""
    if not isinstance(entries, list):
        return "no list of subsets in the witness data"
    listed = {}
    for e in entries:
        try:
            features = tuple(e["features"])
            bound, kind, data = e["bound"], e["witness"]["kind"], e["witness"]["data"]
        except (KeyError, TypeError) as err:
            return f"subset {e!r:.80} lacks {err}"
        if not (len(features) == k and all(isinstance(j, int) and not isinstance(j, bool)
                                           for j in features)
                and list(features) == sorted(set(features)) and 0 <= features[0]
                and features[-1] < n):
            return f"{list(features)!r:.80} is not {k} increasing feature indices below {n}"
        if not (isinstance(bound, int | float) and not isinstance(bound, bool)
                and math.isfinite(bound)) or kind not in ("none", "conflicts", "iis_cover") \
                or not isinstance(data, dict) or features in listed:
            return f"subset {list(features)}: a bound, a known witness kind, data, once"
        listed[features] = (float(bound), kind, data)
    return listed


#: estimator class name -> its profile (subclasses use their nearest listed base's)
PROFILES: dict[str, Profile] = {
    "ICEClassifier": Profile(_zero_one_objective, _zero_one_value,
                             frozenset({"none", "conflicts", "iis_cover", "feature_subsets"}),
                             zero_one_rtol, model_class=_ice_model_class,
                             constraint=_ice_constraints),
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
