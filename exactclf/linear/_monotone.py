"""``ICEClassifier(monotonic_cst=...)``: the affine rule with the fewest training errors
among those whose coefficients have the signs asked for, proven.

A feature with constraint ``+1`` must have ``coef_[j] >= 0`` (the decision never falls as
the feature grows), ``-1`` ``coef_[j] <= 0``. The search is the enumeration of ICE over the
points and one point at infinity per constrained feature
(:mod:`exactclf._zero_one._signs`, :func:`exactclf._zero_one._min01.solve_rows`): exact
when it completes, anytime under ``time_limit``. It starts from the better of the constant
rule and a logistic regression fitted under the same signs (with the intercept that
minimizes the errors of its direction).

From dimension 5 on, or where the enumeration is predicted not to finish in the budget,
the minimum cover of the infeasible subsystems runs first (the constraints are rows of
every subsystem that no cover may drop: :class:`exactclf._zero_one._iis.Fixed`), as for an
unconstrained fit: its IISs, with exact Farkas multipliers on the samples and on the
constraints, are the certificate's witness. The enumeration follows where it is predicted
to finish in the time left; where it cannot, and the cover has not proven the optimum in a
tenth of the budget, a big-M MILP with the constraint rows proposes a rule (in a quarter)
before the cover goes on. Below dimension 5, an enumeration that a budget stops leaves a
tenth of the time to the cover, for a bound. :meth:`_SignSearch.run` is the schedule.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from .._base import BinaryData, errors_agree, rule_errors
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
from .._combinatorics import MAX_RANK
from .._separator import separate_rows
from .._stages import Stage, enabled
from .._trace import FitTrace
from .._verification._profiles import affine_model_class
from .._verification._tolerances import zero_one_rtol
from .._warnings import warn
from .._zero_one._bounds import _IIS_FIRST_DIM, conflict_bound
from .._zero_one._iis import IISCoverSolver, cuts_cover_bound, iis_witness
from .._zero_one._milp import bigm_milp
from .._zero_one._min01 import search_size, solve_rows
from .._zero_one._portfolio import enumeration_seconds
from .._zero_one._signs import SignedFrame, signed_frame
from ._feature_subsets import best_threshold

__all__ = ["check_monotone_fit", "fit_monotone", "signed_logistic"]

#: share of the time left that the IIS cover gets when the enumeration can follow it: the
#: cover's bound is the fit's on a stop, the enumeration's only on completion
_COVER_SHARE = 0.5
#: share of the time that an enumeration going first under a budget leaves to the IIS
#: cover, for a bound if the enumeration stops (as ICEClassifier keeps a tenth for one)
_BOUND_SHARE = 0.1
#: where the IIS cover runs alone under a budget (beyond the exact range) and has not proven
#: the optimum in this share of the time, the big-M MILP gets as much: on 2,000-4,000 points
#: its rule had fewer errors than the cover's after 60 s (benchmarks/results/ablation.txt)
_MILP_SHARE = 0.25
#: the IIS cover's first turn, before the MILP: the fits it proves at all under a budget it
#: mostly proves in seconds, which a MILP going first would delay by its whole turn
#: (benchmarks/results/ablation.txt: sepsis)
_FIRST_TURN = 0.1
#: share of an IIS cover's time kept for the master's LP relaxation after the peeling
#: passes (IISCoverSolver.run's reserve)
_RESERVE_SHARE = 0.25
#: inverse regularization of the sign-constrained logistic regression (scikit-learn's
#: LogisticRegression default, on standardized features)
_LOGISTIC_C = 1.0


def check_monotone_fit(method: str) -> None:
    """Raise ``ValueError`` where sign constraints cannot be fitted: ``method`` other than
    ``"auto"`` or ``"exact"`` (the IIS cover alone and the MILP heuristic take none).

    Examples
    --------
    >>> check_monotone_fit("auto")
    >>> check_monotone_fit("milp")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ICEClassifier(monotonic_cst=...) runs with method='auto' or 'exact'; got ...
    """
    if method not in ("auto", "exact"):
        raise ValueError(
            "ICEClassifier(monotonic_cst=...) runs with method='auto' or 'exact'; got "
            f"method={method!r}.")


def signed_logistic(X: np.ndarray, positive: np.ndarray, w: np.ndarray,
                    signs: np.ndarray) -> tuple[np.ndarray, float]:
    """L2-regularized logistic regression with ``signs[j] * coef[j] >= 0``, by L-BFGS-B on
    standardized features; ``(coef, intercept)`` in the original features.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> coef, b = signed_logistic(X, np.array([1, 1, 0, 0], bool), np.ones(4), np.array([1]))
    >>> coef.tolist()
    [0.0]
    """
    mean, std = X.mean(axis=0), X.std(axis=0)
    std[std == 0] = 1.0
    Xs = (X - mean) / std
    t = np.where(positive, 1.0, -1.0)
    total = float(w.sum())
    d = X.shape[1]

    def loss(theta):
        z = t * (Xs @ theta[:d] + theta[d])
        value = (w @ np.logaddexp(0.0, -z)) / total + 0.5 * theta[:d] @ theta[:d] / (
            _LOGISTIC_C * total)
        g = -w * t * (0.5 * (1.0 - np.tanh(0.5 * z))) / total  # d value / d score
        return value, np.r_[Xs.T @ g + theta[:d] / (_LOGISTIC_C * total), g.sum()]

    bounds = [(0.0, None) if s > 0 else (None, 0.0) if s < 0 else (None, None) for s in signs]
    res = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B", bounds=bounds + [
        (None, None)])
    coef = res.x[:d] / std
    coef[signs * coef < 0] = 0.0  # the bounds hold; this only removes a signed zero's doubt
    return coef, float(res.x[d] - coef @ mean)


class _SignSearch:
    """One ``fit`` of an ICEClassifier ``est`` with sign constraints ``signs`` on validated
    ``data`` (see the module docstring)."""

    def __init__(self, est, data: BinaryData, t0: float, signs: np.ndarray, cap: float):
        self.est, self.data, self.t0, self.signs = est, data, t0, signs
        self.sf: SignedFrame = signed_frame(data.frame, signs)
        self.positive = data.y == est.classes_[1]
        self.trace = FitTrace(t0, type(est).__name__, est.verbose)
        n = len(data.U) + len(self.sf.features)
        self.total = search_size(n, self.sf.dim)
        self.finishes = est._enumeration_finishes(self.total)
        seconds = est.time_limit
        if seconds is None and not self.finishes:
            seconds = cap
        self.budget = Budget(seconds, start=t0)
        conflicts = conflict_bound(data.wpos, data.wneg)
        self.bound, self.bound_method, self.witness = conflicts.value, conflicts.method, None
        self.complete, self.stop, self.n_candidates = False, None, 0
        self.best_errors = math.inf  # the best rule with the signs (see _offer)
        self.cover: IISCoverSolver | None = None

    # -- rules ----------------------------------------------------------------------------
    def _at_most(self, value: float) -> bool:
        """Whether the best rule's errors are at most a search's ``value`` of them (the two
        sums, per sample and per merged point, differ by rounding)."""
        return self.best_errors <= value or errors_agree(self.data, self.best_errors, value)

    def _incumbents(self) -> None:
        """The better of the constant rule and the sign-constrained logistic regression."""
        started = time.perf_counter()
        data, w = self.data, self.data.sample_weight
        d = data.X.shape[1]
        heavier = float(w[self.positive].sum()) > float(w[~self.positive].sum())
        self._offer(np.zeros(d), 1.0 if heavier else -1.0, "majority class")
        coef, _ = signed_logistic(data.X, self.positive, w, self.signs)
        # its direction at the intercept that errs least (a rule that grows with it)
        cut = best_threshold(data.X @ coef, self.positive, w, increasing_only=True)
        if cut.coef > 0:
            self._offer(coef, cut.intercept, "sign-constrained LogisticRegression")
        self.upper = (self.best_errors, self.source)
        self.trace.record(Stage.INCUMBENTS, started, self.best_errors, self.bound, "done")

    def _offer(self, coef: np.ndarray, intercept: float, source: str) -> None:
        errors = rule_errors(self.data, self.positive, coef, intercept)
        if errors < self.best_errors:
            self.coef, self.intercept, self.best_errors, self.source = (
                coef, intercept, errors, source)

    # -- stages -----------------------------------------------------------------------------
    def run(self) -> None:
        """The schedule: the incumbents; the IIS cover first from dimension 5 on or where
        the enumeration is predicted not to finish in time (then the enumeration, if it is
        predicted to finish in the time left), else the enumeration first, and if a
        budget stops it, the IIS cover in the time kept for a bound."""
        est, budget = self.est, self.budget
        predicted = enumeration_seconds(self.total, est.n_jobs)
        if est.method == "exact" and not (self.total <= MAX_RANK and (
                self.finishes or budget.limited)):
            raise ValueError(
                f"ICEClassifier(method='exact', monotonic_cst=...): the enumeration has "
                f"{self.total:.3g} candidate hyperplanes, about {predicted / 86400:.3g} days "
                "here. Use method='auto' (the IIS cover), give a time_limit, reduce the "
                "number of features, or fit on a subsample.")
        self._incumbents()
        cover = enabled(Stage.SIGNED_IIS_COVER) and est.method == "auto"
        enumerable = (enabled(Stage.SIGNED_ENUMERATION) and self.total <= MAX_RANK
                      and (self.finishes or budget.limited))
        cover_first = cover and (
            self.sf.dim >= _IIS_FIRST_DIM or not self.finishes or not enumerable
            or (budget.limited and predicted > budget.left()))
        if cover_first:
            follows = enumerable and predicted <= (1 - _COVER_SHARE) * budget.left()
            if not follows and budget.limited and enabled(Stage.SIGNED_MILP):
                # the cover proves many fits in its first seconds; where it does not, the
                # MILP proposes a rule, and the cover goes on from it
                self._iis_cover(_FIRST_TURN)
                if not self.complete and self.stop is None:
                    self._milp(_MILP_SHARE / (1 - _FIRST_TURN))
            if not self.complete and self.stop is None:
                self._iis_cover(_COVER_SHARE if follows else 1.0)
            enumerable = follows
        if self.complete or self.stop is not None or not enumerable:
            return
        keep = _BOUND_SHARE * budget.left() if budget.limited and cover and not cover_first \
            else 0.0
        self._enumerate(keep)
        if not self.complete and self.stop == StopReason.TIME_LIMIT and keep:
            self.stop = None
            self._iis_cover(1.0)

    def _start(self) -> np.ndarray:
        """The incumbent's labeling of the unique points."""
        return self.data.U @ self.coef + self.intercept > 0

    def _milp(self, share: float) -> None:
        """The big-M MILP with the constraint rows, on ``share`` of the time left: a
        heuristic incumbent (bounded weights cut off thin cells; its bound is not used)."""
        started = time.perf_counter()
        data, sf = self.data, self.sf
        res = bigm_milp(data.Z, data.wpos, data.wneg, fixed=sf.rows[:, :-1],
                        time_limit=at_least(self.budget.left() * share))
        if res.interrupted:
            self.stop = StopReason.INTERRUPTED
        if np.any(res.coef != 0):
            coef, intercept = sf.to_original(np.r_[res.coef, res.intercept])
            coef[self.signs * coef < 0] = 0.0  # a rounding's wrong sign on a zero
            self._offer(coef, intercept, "big-M MILP with sign constraints")
        self.trace.record(Stage.SIGNED_MILP, started, self.best_errors, self.bound,
                          StopReason.INTERRUPTED if res.interrupted else "done")

    def _iis_cover(self, share: float) -> None:
        """The IIS cover with the constraints as fixed rows, on ``share`` of the time left:
        a bound with its witness, and the optimum when it closes."""
        started = time.perf_counter()
        data, est = self.data, self.est
        seconds = None if not self.budget.limited else at_least(self.budget.left() * share)
        if self.cover is None:  # one solver, resumed by a later turn
            self.cover = IISCoverSolver(data.Z, data.wpos, data.wneg, samples=data.U,
                                        fixed=self.sf.fixed(), mip_solver=est.mip_solver,
                                        verbose=est.verbose)
        solver = self.cover
        solver.offer(self._start())
        # the master's LP relaxation over the IISs of unfinished peeling passes: on
        # thousands of points the first passes alone can take the budget
        res = solver.run(time_limit=seconds,
                         reserve=0.0 if seconds is None else _RESERVE_SHARE * seconds)
        if res.stop_reason == StopReason.INTERRUPTED:
            self.stop = StopReason.INTERRUPTED
        self._realize(res.positive)
        sign = np.where(data.wpos > data.wneg, 1, -1)
        iis, left_out = iis_witness(data.X, data.y == est.classes_[1], data.U, sign,
                                    solver.cut_sets(), known=solver.farkas(),
                                    known_fixed=solver.farkas_fixed())
        bound = res.lower_bound
        if left_out:  # proven in the frame only: the bound of those on the samples
            kept = [t for k, t in enumerate(solver.cut_sets()) if k not in set(left_out)]
            bound = min(bound, cuts_cover_bound(kept, data.wpos, data.wneg))
        if bound > self.bound:
            self.bound, self.bound_method = bound, BoundMethod.IIS_COVER
            self.witness = Witness(
                "iis_cover", f"{len(iis)} IISs, each certified by exact Farkas multipliers "
                "on the samples and on the sign constraints (members -1 - j: the constraint "
                "on feature j); the bound is the minimum weight of errors on a set of sample "
                "members that meets every IIS, plus the conflicting duplicates",
                {"iis": iis})
        self.complete = bool(res.complete and not left_out and self._at_most(res.value))
        self.trace.record(Stage.SIGNED_IIS_COVER, started, self.best_errors, self.bound,
                          "proven" if self.complete else res.stop_reason or "done")

    def _enumerate(self, keep: float = 0.0) -> None:
        """The enumeration over the points and the constraints' points at infinity, until
        ``keep`` seconds are left."""
        started = time.perf_counter()
        data, sf = self.data, self.sf
        Xh = np.vstack([sf.points(data.Z), sf.rows])
        # a constraint row outweighs every point: no optimum gives one up (the constant
        # rule keeps them all, at the cost of the lighter class)
        heavy = 2.0 * float(data.wpos.sum() + data.wneg.sum()) + 1.0
        wpos = np.r_[data.wpos, np.full(len(sf.rows), heavy)]
        wneg = np.r_[data.wneg, np.zeros(len(sf.rows))]
        start = np.r_[self._start(), np.ones(len(sf.rows), bool)]
        est = self.est
        time_limit = None if not self.budget.limited else at_least(self.budget.left(keep))
        # Ctrl-C stops the search with the best labeling so far (it warns)
        res = solve_rows(Xh, wpos, wneg, start, max_candidates=est.max_candidates,
                         time_limit=time_limit, n_jobs=est.n_jobs, verbose=est.verbose)
        self.n_candidates += res.n_candidates
        self.stop = None if res.complete else res.stop_reason
        if res.improved:
            self._realize(res.positive[:len(data.U)])
        if res.complete and self._at_most(res.value):
            self.complete = True
            self.bound, self.bound_method = self.best_errors, BoundMethod.EXHAUSTIVE
            self.witness = Witness(
                "none", "an enumeration proof has no compact witness: the bound is the best "
                "of every candidate hyperplane through the points and the constraints' "
                "points at infinity")
        elif res.complete:  # the model float64 realizes has more errors than the labeling
            self.stop = StopReason.UNREALIZABLE_MARGIN
        self.trace.record(Stage.SIGNED_ENUMERATION, started, self.best_errors, self.bound,
                          "proven" if self.complete else self.stop or "done")

    def _realize(self, positive: np.ndarray) -> None:
        """The maximum-margin rule of a labeling of the unique points that keeps the
        constraints strictly (offered as the incumbent if it has fewer errors)."""
        sf = self.sf
        G = np.vstack([sf.points(self.data.Z) * np.where(positive, 1.0, -1.0)[:, None],
                       sf.rows])
        theta, separates = separate_rows(G)
        if not separates:
            return
        coef, intercept = sf.to_original(theta)
        coef[self.signs * coef < 0] = 0.0  # a rounding's wrong sign on a zero
        self._offer(coef, intercept, "search")

    # -- the model and its certificate -------------------------------------------------------
    def finish(self, y, sample_weight) -> None:
        est, data = self.est, self.data
        est.coef_ = self.coef.reshape(1, -1)
        est.intercept_ = np.array([self.intercept])
        est.method_, est.device_ = "exact", "cpu"
        est.upper_bound_, est.upper_bound_source_ = self.upper
        est.n_candidates_, est.n_candidates_total_ = self.n_candidates, self.total
        est.fit_trace_ = list(self.trace.rows)
        realized = self.best_errors
        bound = min(self.bound, realized)
        witness = self._witness()
        rtol = zero_one_rtol(witness.kind, data.sample_weight)
        optimal = bool(realized - bound <= rtol * abs(realized))
        if not data.frame.certifiable and self.bound_method == BoundMethod.EXHAUSTIVE:
            optimal = False
            self.stop = StopReason.THIN_POINTS
            conflicts = conflict_bound(data.wpos, data.wneg)
            bound, self.bound_method = min(conflicts.value, realized), conflicts.method
            witness = Witness("conflicts", "re-derived from the data: identical samples "
                              "with different labels")
        stop = None if optimal else (self.stop or StopReason.NUMERICAL)
        est.certificate_ = Certificate(
            type(est).__name__,
            affine_model_class(est.max_features, data.X.shape[1], self.signs),
            class_weighted(ZERO_ONE_OBJECTIVE, est.class_weight), value=realized,
            bound=bound, bound_method=self.bound_method, is_optimal=optimal,
            stop_reason=None if stop is None else StopReason(stop),
            fit_time=time.perf_counter() - self.t0,
            fingerprint=data_fingerprint(data.X, y, sample_weight), n_samples=len(data.X),
            rtol=rtol, witness=witness)
        if stop == StopReason.INTERRUPTED:
            warn(f"{type(est).__name__} interrupted: returning the best classifier found so "
                 "far", RuntimeWarning)
        if not optimal:
            warn(f"{type(est).__name__}(monotonic_cst=...) stopped early ({stop}): the best "
                 f"classifier found with the signs asked for has {realized:g} errors; "
                 f"optimality is not proven (lower bound {bound:g}, gap "
                 f"{100 * est.gap_:.1f}%).", ConvergenceWarning)

    def _witness(self) -> Witness:
        """The evidence of the bound: the enumeration's (none), the IIS cover's, or the
        conflicting duplicates."""
        if self.witness is not None:
            return self.witness
        return Witness("conflicts", "re-derived from the data: identical samples with "
                       "different labels")


def fit_monotone(est, data: BinaryData, y, sample_weight, t0: float,
                 signs: np.ndarray, cap: float) -> None:
    """Fit ``est``, an ICEClassifier with the sign constraints ``signs`` (one of -1, 0, 1
    per feature, not all 0), on its validated ``data`` (``y`` and ``sample_weight`` as
    passed to ``fit``, for the fingerprint; ``t0``: when ``fit`` started; ``cap``: the
    seconds a fit without ``time_limit`` gets where the enumeration cannot finish in a day,
    an unconstrained fit's).

    Examples
    --------
    >>> from exactclf import ICEClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> clf = ICEClassifier(monotonic_cst=[1]).fit(X, [1, 1, 0, 0])  # calls it
    >>> clf.training_errors_, clf.is_optimal_, clf.coef_[0, 0] >= 0
    (2.0, True, np.True_)
    """
    search = _SignSearch(est, data, t0, signs, cap)
    search.run()
    search.finish(y, sample_weight)
