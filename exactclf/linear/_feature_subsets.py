"""``ICEClassifier(max_features=k)``: the affine rule with the fewest training errors among
those that use at most ``k`` features, proven.

A rule on fewer than ``k`` features is a rule on every ``k``-subset that holds them, so the
optimum is the least, over the ``C(D, k)`` subsets ``S`` of ``k`` of the ``D`` features, of
the optimum of the ordinary problem on ``X[:, S]``:

- ``k = 1``: each feature's optimum is an exact scan of its thresholds, both ways
  (:func:`best_threshold`);
- ``k >= 2``: the subsets are searched one by one, each by an ordinary ICEClassifier on
  ``X[:, S]`` (the whole machinery: incumbents, enumeration, IIS cover, budgets, witnesses),
  those holding the features with the best single-feature rules first, against one
  incumbent: the best rule found on any subset, starting from the best single-feature rule.
  A subset whose conflicting duplicates (samples identical on ``S`` with both labels) cost
  as much as the incumbent cannot beat it, and is ruled out without a search. (The inner
  search cannot take the incumbent's error count as a cut-off: its incumbent must be a
  labeling realized on ``S``.)

The certificate's bound is the least of the subsets' proven bounds: a subset searched to its
end contributes its optimum, any other its own proven bound (at least its conflicting
duplicates), so a budget stop still returns a valid bound. The model is proven optimal when
that bound meets its errors. The witness (kind ``feature_subsets``) lists the searched
subsets' bounds with their own witnesses, and :func:`exactclf.verify` re-derives the rest
(:func:`exactclf._verification._profiles.check_feature_subsets`).
"""

from __future__ import annotations

import itertools
import math
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from .._base import BinaryData, errors_agree, merge_duplicates, rule_errors
from .._budget import Budget, at_least
from .._certificate import (
    ZERO_ONE_OBJECTIVE,
    BoundMethod,
    Certificate,
    StopReason,
    Witness,
    class_weighted,
    data_fingerprint,
)
from .._geometry import affine_frame
from .._separator import UnrealizableLabeling, max_margin_separator
from .._trace import FitTrace
from .._verification._profiles import affine_model_class
from .._verification._signs import monotone_signs
from .._verification._tolerances import integral_weights, zero_one_rtol
from .._warnings import warn
from .._zero_one._bounds import conflict_bound
from .._zero_one._sweep import best_line

__all__ = ["Threshold", "best_threshold", "fit_feature_subsets", "signed_threshold"]

#: the float64 sums of a threshold scan are within this many ``eps`` of the total weight per
#: sample of the exact ones (a sum per value, a running sum, the complement): a generous
#: multiple of the first-order error, within which the candidates are summed exactly
_SCAN_EPS_PER_SAMPLE = 8
#: steps (``n^2 log2 n`` for ``n`` points) per second of the sweeps of two features on this
#: project's 2-core machine (3810 points in about 2.4 s): a sweep predicted to outlast the
#: time left is not started (it cannot stop midway)
_SWEEP_RATE = 7e7


@dataclass(frozen=True)
class Threshold:
    """The best rule on one feature ``x``: ``errors``, its weighted training errors, and the
    rule ``coef * x + intercept > 0`` (``coef`` is +1 or -1, or 0 for a constant rule)."""

    errors: float
    coef: float
    intercept: float


def best_threshold(x: np.ndarray, positive: np.ndarray, w: np.ndarray,
                   increasing_only: bool = False) -> Threshold:
    """The affine rule on one feature with the fewest weighted errors, exactly
    (``increasing_only``: among the rules ``x > t`` and the constants).

    An affine rule on one feature cuts its sorted distinct values once (or not at all: a
    constant) and calls one side positive; every cut is scanned both ways. The sums are
    exact for integer weights; otherwise the cuts within rounding of the least are summed
    again exactly (``math.fsum``), so the errors returned are those of the rule, rounded
    once. The threshold is the midpoint of the cut's two values (the widest margin), or
    where float64 has no number strictly between them, the value on the negative side.

    Parameters
    ----------
    x : ndarray of shape (n_samples,)
    positive : ndarray of shape (n_samples,), bool
        The samples of the positive class.
    w : ndarray of shape (n_samples,)
        Non-negative sample weights.

    Returns
    -------
    Threshold

    Examples
    --------
    >>> x = np.array([0.0, 1.0, 2.0, 3.0, 3.0])
    >>> best_threshold(x, np.array([0, 0, 1, 1, 0], bool), np.ones(5))
    Threshold(errors=1.0, coef=1.0, intercept=-1.5)
    >>> best_threshold(x, np.array([1, 1, 0, 0, 1], bool), np.ones(5)).coef
    -1.0
    """
    values, inverse = np.unique(x + 0.0, return_inverse=True)  # -0.0 and 0.0 are one value
    inverse = inverse.ravel()
    m = len(values)
    wp = np.bincount(inverse, weights=np.where(positive, w, 0.0), minlength=m)
    wn = np.bincount(inverse, weights=np.where(positive, 0.0, w), minlength=m)
    P, N = np.r_[0.0, np.cumsum(wp)], np.r_[0.0, np.cumsum(wn)]
    # cut c (0..m): values[c:] positive ("above"), or values[:c] positive ("below")
    errors = np.r_[P + (N[-1] - N), N + (P[-1] - P)]
    if increasing_only:  # "below" only as the constant rules (every value on one side)
        errors[m + 2:2 * m + 1] = np.inf
    if integral_weights(w):
        best = int(np.argmin(errors))
        value = float(errors[best])
    else:
        slack = _SCAN_EPS_PER_SAMPLE * (len(w) + 2) * np.finfo(np.float64).eps * float(w.sum())
        near = np.flatnonzero(errors <= errors.min() + 2 * slack)
        exact = [_cut_errors(int(i), m, inverse, positive, w) for i in near]
        value = min(exact)
        best = int(near[exact.index(value)])
    return Threshold(value, *_cut_rule(best, values))


def signed_threshold(x: np.ndarray, positive: np.ndarray, w: np.ndarray,
                     sign: int) -> Threshold:
    """:func:`best_threshold` among the rules whose coefficient has the ``sign`` asked
    (``+1``: ``x > t``, ``-1``: ``x < t``, and the constants either way; 0: all).

    Examples
    --------
    >>> x = np.array([0.0, 1.0, 2.0, 3.0])
    >>> signed_threshold(x, np.array([1, 1, 0, 0], bool), np.ones(4), -1)
    Threshold(errors=0.0, coef=-1.0, intercept=1.5)
    >>> signed_threshold(x, np.array([1, 1, 0, 0], bool), np.ones(4), 1).errors
    2.0
    """
    if sign == 0:
        return best_threshold(x, positive, w)
    t = best_threshold(sign * x, positive, w, increasing_only=True)
    return Threshold(t.errors, sign * t.coef + 0.0, t.intercept)


def _cut_positive(i: int, m: int, inverse: np.ndarray) -> np.ndarray:
    """The samples that cut ``i`` of :func:`best_threshold` calls positive."""
    return inverse >= i if i <= m else inverse < i - (m + 1)


def _cut_errors(i: int, m: int, inverse, positive, w) -> float:
    return math.fsum(w[_cut_positive(i, m, inverse) != positive].tolist())


def _cut_rule(i: int, values: np.ndarray) -> tuple[float, float]:
    """``(coef, intercept)`` of the rule of cut ``i``: ``x > t`` above, ``x < t`` below,
    with ``t`` strictly between the two values it separates (so that ``x - t`` has the sign
    of the rule on every value, float64 subtraction being exact in sign)."""
    m = len(values)
    up = i <= m
    c = i if up else i - (m + 1)
    if c in (0, m):  # no cut: every sample on one side
        return 0.0, 1.0 if (c == 0) == up else -1.0
    a, b = float(values[c - 1]), float(values[c])
    t = a / 2 + b / 2
    if up:
        return 1.0, -(t if a <= t < b else a)
    return -1.0, t if a < t <= b else b


@dataclass
class _Rule:
    """A rule on all the features, where it came from, and its weighted errors on the
    training data (float64 decision, summed exactly)."""

    coef: np.ndarray
    intercept: float
    errors: float
    source: str
    method: str = "exact"
    device: str = "cpu"


@dataclass
class _Subset:
    """What the fit knows of a subset of features: a proven bound on its optimum, how it
    was proven (``witness``: the inner fit's, when its bound is the subset's), and whether it
    was searched to its end (``proven``) or ruled out by a bound at the incumbent."""

    bound: float
    method: str
    witness: Witness | None = None
    searched: bool = False
    proven: bool = False
    ruled_out: bool = False


class _SubsetSearch:
    """One ``fit`` of an ICEClassifier ``est`` with ``max_features`` below the number of
    features, on validated ``data``: the searches of the subsets, then the model and its
    certificate (see the module docstring)."""

    def __init__(self, est, data: BinaryData, t0: float):
        self.est, self.data, self.t0 = est, data, t0
        self.k, self.D = est.max_features, data.X.shape[1]
        self.budget = Budget(est.time_limit, start=t0)
        self.trace = FitTrace(t0, type(est).__name__, est.verbose)
        self.positive = data.y == est.classes_[1]
        # monotonic_cst: the signs asked of the coefficients (0: none)
        self.signs = monotone_signs(est)
        if self.signs is None:
            self.signs = np.zeros(self.D, dtype=int)
        self.subsets: dict[tuple[int, ...], _Subset] = {}
        self.stop: str | None = None  # what stopped the search of the subsets
        self.inner_stop: str | None = None  # why a searched subset was not proven
        self.caught_interrupt = False
        self.n_candidates = self.n_candidates_total = 0

    def run(self) -> None:
        singles = self._singles()
        if self.k == 1:
            return
        first = min(range(self.D), key=lambda j: singles[j].errors)
        coef = np.zeros(self.D)
        coef[first] = singles[first].coef
        self.best = self._rule(coef, singles[first].intercept,
                               f"best single-feature threshold (feature {first})")
        self.upper = self.best
        self.say(f"{math.comb(self.D, self.k)} subsets of {self.k} of {self.D} features; "
                 f"incumbent {self.best.errors:g} errors ({self.best.source})")
        # the subsets holding the best single features first: their optima are at most
        # those features' own, so a good incumbent comes early and rules out more
        order = sorted(itertools.combinations(range(self.D), self.k),
                       key=lambda S: sorted(singles[j].errors for j in S))
        for i, S in enumerate(order):
            try:
                self._visit(S, len(order) - i)
            except KeyboardInterrupt:  # between two searches: the subsets left are bounded
                self.stop, self.caught_interrupt = StopReason.INTERRUPTED, True
                for rest in order[i:]:
                    self._visit(rest, 1)
                return

    def _singles(self) -> list[Threshold]:
        """The best rule on each feature; for ``k = 1`` these are the subsets, each proven
        by its scan (one trace row each), and the best of them is the model."""
        keep = self.data.sample_weight > 0  # a sample of weight 0 moves no threshold
        X, w, positive = self.data.X[keep], self.data.sample_weight[keep], self.positive[keep]
        singles, started = [], time.perf_counter()
        for j in range(self.D):
            t = time.perf_counter()
            singles.append(signed_threshold(X[:, j], positive, w, self.signs[j]))
            if self.k == 1:
                coef = np.zeros(self.D)
                coef[j] = singles[j].coef
                rule = self._rule(coef, singles[j].intercept, f"threshold on feature {j}")
                if j == 0 or rule.errors < self.best.errors:
                    self.best = rule
                self.subsets[(j,)] = _Subset(singles[j].errors, "exact threshold scan",
                                             searched=True, proven=True)
                self.trace.record(f"subset {(j,)}", t, self.best.errors, singles[j].errors,
                                  "proven")
        self.n_candidates = self.n_candidates_total = 2 * sum(
            len(np.unique(X[:, j])) + 1 for j in range(self.D))
        if self.k == 1:
            self.upper = self.best
        else:
            # no bound on the whole problem yet but the conflicting duplicates of all the
            # features (a rule on fewer features errs on them too)
            self.trace.record("single-feature thresholds", started,
                              min(s.errors for s in singles),
                              conflict_bound(self.data.wpos, self.data.wneg).value, "done")
        return singles

    def _visit(self, S: tuple[int, ...], left: int) -> None:
        """Rule out, search, or (after a stop) only bound the subset ``S``, the first of
        ``left`` subsets still to visit: under a time limit it gets an equal part of the
        time left, so that every subset is searched and contributes its own proven bound
        (one subset taking all the time would leave the others only their conflicting
        duplicates); a subset that finishes early leaves its time to the others."""
        cols = list(S)
        data = self.data
        keep = data.sample_weight > 0
        U, wpos, wneg, _ = merge_duplicates(data.X[keep][:, cols], self.positive[keep],
                                            data.sample_weight[keep])
        conflicts = conflict_bound(wpos, wneg)
        if conflicts.value >= self.best.errors:
            self.subsets[S] = _Subset(conflicts.value, conflicts.method, ruled_out=True)
            return
        self.subsets[S] = _Subset(conflicts.value, conflicts.method)
        if self.stop is None and self.budget.left() <= 0:
            self.stop = StopReason.TIME_LIMIT
        if self.stop is not None:
            return
        started = time.perf_counter()
        if (self.k == 2 and self.est.method in ("auto", "exact")
                and not np.any(self.signs[cols]) and self._swept(S, U, wpos, wneg, started)):
            return
        inner = clone(self.est).set_params(
            max_features=None, verbose=0, class_weight=None,
            monotonic_cst=self.signs[cols] if np.any(self.signs[cols]) else None,
            time_limit=at_least(self.budget.left() / left) if self.budget.limited else None)
        try:
            with warnings.catch_warnings():
                # the fit warns once, for all its subsets
                warnings.simplefilter("ignore", ConvergenceWarning)
                # the class weights are in data.sample_weight already
                inner.fit(data.X[:, cols], data.y, sample_weight=data.sample_weight)
        except KeyboardInterrupt:
            self.stop, self.caught_interrupt = StopReason.INTERRUPTED, True
            self.trace.record(f"subset {S}", started, self.best.errors, conflicts.value,
                              StopReason.INTERRUPTED)
            return
        self._searched(S, inner, started)

    def _swept(self, S: tuple[int, ...], U, wpos, wneg, started: float) -> bool:
        """The exact optimum on two features by rotational sweeps (:func:`best_line`,
        ``O(n^2 log n)`` where the enumeration is ``O(n^3)``), where their points span the
        plane in a frame the searches resolve; False where they do not, or the model
        float64 realizes has other errors (the ordinary fit then searches the subset)."""
        n = len(U)
        if self.budget.limited and n * n * math.log2(max(n, 2)) > _SWEEP_RATE * \
                self.budget.left():
            return False  # the ordinary fit keeps to the time left
        frame = affine_frame(U)
        if frame.dim != 2 or not frame.certifiable:
            return False
        Z = frame.transform(U)
        value, positive = best_line(Z, wpos, wneg)
        try:
            a, b = max_margin_separator(Z, positive)
            coef_S, intercept = frame.to_original(a, b)
        except (UnrealizableLabeling, ValueError):
            return False
        coef = np.zeros(self.D)
        coef[list(S)] = coef_S
        rule = self._rule(coef, intercept, f"subset {S}")
        if not errors_agree(self.data, rule.errors, value):
            return False
        entry = self.subsets[S]
        entry.bound, entry.method = rule.errors, BoundMethod.EXHAUSTIVE
        entry.witness = Witness("none", "an exhaustive rotational sweep of the lines through "
                                "two points has no compact witness")
        entry.searched = entry.proven = True
        self.n_candidates += n * (n - 1) // 2
        self.n_candidates_total += n * (n - 1) // 2
        if rule.errors < self.best.errors:
            self.best = rule
        self.trace.record(f"subset {S}", started, self.best.errors, entry.bound, "proven")
        return True

    def _searched(self, S: tuple[int, ...], inner, started: float) -> None:
        """Take the result of the inner fit on ``S``: its bound, and its rule if better."""
        cert = inner.certificate_
        entry = self.subsets[S]
        if cert.bound > entry.bound:
            entry.bound, entry.method, entry.witness = cert.bound, cert.bound_method, \
                cert.witness
        entry.searched, entry.proven = True, cert.is_optimal
        self.n_candidates += inner.n_candidates_
        self.n_candidates_total += inner.n_candidates_total_
        coef = np.zeros(self.D)
        coef[list(S)] = inner.coef_[0]
        rule = self._rule(coef, float(inner.intercept_[0]), f"subset {S}", inner.method_,
                          inner.device_)
        if rule.errors < self.best.errors:
            self.best = rule
        if cert.stop_reason == StopReason.INTERRUPTED:
            self.stop = StopReason.INTERRUPTED
        elif not cert.is_optimal:
            self.inner_stop = self.inner_stop or cert.stop_reason
        self.trace.record(f"subset {S}", started, self.best.errors, entry.bound,
                          "proven" if cert.is_optimal else cert.stop_reason or "not proven")

    def _rule(self, coef: np.ndarray, intercept: float, source: str, method: str = "exact",
              device: str = "cpu") -> _Rule:
        return _Rule(coef, intercept, rule_errors(self.data, self.positive, coef, intercept),
                     source, method, device)

    def say(self, msg: str) -> None:
        if self.est.verbose:
            print(f"{type(self.est).__name__}: {msg}", file=sys.stderr, flush=True)

    # -- the model and its certificate -------------------------------------------------------

    def finish(self, y, sample_weight) -> None:
        """Set the fitted attributes of ``est``: the best rule, its certificate, the trace;
        warn when it is not proven optimal."""
        est, data, best = self.est, self.data, self.best
        est.coef_ = best.coef.reshape(1, -1)
        est.intercept_ = np.array([best.intercept])
        est.method_, est.device_ = best.method, best.device
        est.upper_bound_, est.upper_bound_source_ = self.upper.errors, self.upper.source
        est.n_candidates_, est.n_candidates_total_ = self.n_candidates, self.n_candidates_total
        est.fit_trace_ = list(self.trace.rows)
        w = data.sample_weight
        # the value verify re-computes: the errors of predict (whose decision_function is
        # _rule's), summed exactly rounded
        realized = best.errors
        bound = min([realized] + [s.bound for s in self.subsets.values()])
        rtol = zero_one_rtol("feature_subsets", w)
        optimal = bool(realized - bound <= rtol * abs(realized))
        stop = None if optimal else (self.stop or self.inner_stop or StopReason.NUMERICAL)
        est.certificate_ = Certificate(
            type(est).__name__,
            affine_model_class(self.k, self.D, self.signs if np.any(self.signs) else None),
            class_weighted(ZERO_ONE_OBJECTIVE, est.class_weight), value=realized, bound=bound,
            bound_method=self._bound_method(), is_optimal=optimal,
            stop_reason=None if stop is None else StopReason(stop),
            fit_time=time.perf_counter() - self.t0,
            fingerprint=data_fingerprint(data.X, y, sample_weight), n_samples=len(data.X),
            rtol=rtol, witness=self._witness())
        if self.caught_interrupt:
            warn(f"{type(est).__name__} interrupted between the searches of feature subsets: "
                 "returning the best classifier found so far", RuntimeWarning)
        if not optimal:
            warn(f"{type(est).__name__}(max_features={self.k}) {self._why_not_proven(stop)}: "
                 f"the best classifier found has {realized:g} errors; optimality is not "
                 f"proven (lower bound {bound:g}, gap {100 * est.gap_:.1f}%).",
                 ConvergenceWarning)

    def _counts(self) -> tuple[int, int, int]:
        subsets = self.subsets.values()
        return (sum(s.proven for s in subsets), sum(s.ruled_out for s in subsets),
                sum(s.searched for s in subsets))

    def _bound_method(self) -> str:
        total = math.comb(self.D, self.k)
        if self.k == 1:
            return f"exact threshold scan of each of the {total} features"
        proven, ruled_out, _ = self._counts()
        return (f"least proven bound of the {total} subsets of {self.k} features ({proven} "
                f"searched to optimality, {ruled_out} ruled out by their conflicting "
                f"duplicates, {total - proven - ruled_out} not proven: the bound of their "
                "search, or their conflicting duplicates)")

    def _witness(self) -> Witness:
        """The ``feature_subsets`` witness: the subsets whose bound an inner search proved
        (those bounded by their conflicting duplicates, and for ``k = 1`` every feature's
        scan, verify re-derives from the data)."""
        listed = [{"features": list(S), "bound": s.bound, "method": s.method,
                   "witness": {"kind": s.witness.kind, "data": s.witness.data}}
                  for S, s in sorted(self.subsets.items())
                  if s.witness is not None and s.witness.kind in ("none", "iis_cover")]
        note = (f"the least, over every subset of {self.k} of the {self.D} features, of a "
                "proven bound on the best rule on that subset: its conflicting duplicates ")
        note += ("and its exact threshold scan, re-derived from the data" if self.k == 1 else
                 "(re-derived from the data) or, for the subsets listed, the bound of their "
                 "own search, with its witness (an enumeration has none)")
        return Witness("feature_subsets", note, {"subsets": listed})

    def _why_not_proven(self, stop) -> str:
        proven, ruled_out, searched = self._counts()
        total = math.comb(self.D, self.k)
        return (f"stopped ({stop}) after searching {searched} of the {total} feature subsets "
                f"({proven} proven, {ruled_out} ruled out)")


def fit_feature_subsets(est, data: BinaryData, y, sample_weight, t0: float) -> None:
    """Fit ``est``, an ICEClassifier whose ``max_features`` is below the number of features,
    on its validated ``data`` (``y`` and ``sample_weight`` as passed to ``fit``, for the
    fingerprint; ``t0``: when ``fit`` started): the best rule on at most ``max_features``
    features, its certificate and the fitted attributes.

    Examples
    --------
    >>> from exactclf import ICEClassifier
    >>> X = np.array([[0.0, 5.0], [1.0, 3.0], [2.0, 4.0], [3.0, 1.0]])
    >>> clf = ICEClassifier(max_features=1).fit(X, [0, 0, 1, 1])  # calls it
    >>> clf.coef_, clf.training_errors_, clf.is_optimal_
    (array([[1., 0.]]), 0.0, True)
    """
    search = _SubsetSearch(est, data, t0)
    search.run()
    search.finish(y, sample_weight)
