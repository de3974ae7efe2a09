"""ICEClassifier: the affine classifier with the fewest training errors, proven."""

from __future__ import annotations

import time
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._backend import resolve_device
from .._base import BinaryClassifierMixin, errors_agree, validate_binary
from .._budget import LONGEST_SEARCH
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
from .._fit_guard import guarded_fit
from .._gurobi import import_gurobipy
from .._separator import UnrealizableLabeling, max_margin_separator
from .._stages import Stage
from .._trace import FitTrace
from .._verification._profiles import affine_model_class, monotone_signs
from .._verification._tolerances import zero_one_rtol
from .._warnings import warn
from .._zero_one._bounds import conflict_bound, lower_bound
from .._zero_one._iis import cuts_cover_bound, iis_witness
from .._zero_one._incumbent import best_incumbent
from .._zero_one._min01 import labeling_errors, majority_labeling, search_size
from .._zero_one._portfolio import PortfolioResult, enumeration_seconds, solve_portfolio
from ._feature_subsets import fit_feature_subsets
from ._monotone import check_monotone_fit, fit_monotone

__all__ = ["ICEClassifier"]

#: seconds of a fit without time_limit that cannot prove its optimum in reasonable time:
#: method="milp", and method="auto" where the enumeration cannot finish
_MILP_SECONDS = 30.0
#: seconds spent on a quick lower bound before refusing (it is quoted in the message)
_REFUSAL_BOUND_SECONDS = 2.0
#: at most this many seconds (and no more than the time_limit leaves) re-prove the bound
#: from the IISs with exact multipliers on the samples when some have none
_RECHECK_SECONDS = 5.0


@dataclass
class _Proof:
    """What a fit's search found: the labeling of the unique points (``positive``), whether
    it is proven optimal (``complete``), its bound with how it was proven and the IISs that
    prove it (``cuts``, their exact ``farkas`` multipliers, and ``witnessed``: those checked
    on the samples), the enumeration's candidates, why it stopped, and the realized errors
    of the model built from it."""

    bound: float
    bound_method: str
    positive: np.ndarray | None = None
    complete: bool = False
    n_candidates: int = 0
    stop: str | None = None
    cuts: list | None = None
    farkas: dict | None = None
    witnessed: tuple | None = None
    realized: float = 0.0


class ICEClassifier(BinaryClassifierMixin, BaseEstimator):
    """Linear classifier with the provably minimal (weighted) number of training errors.

    Incremental cell enumeration (ICE): every labeling an affine classifier can realize is
    reached by a hyperplane through D of the (unique) training points, D being the dimension
    of their affine hull, with the points on that hyperplane labeled by an exact search one
    dimension down. Enumerating those hyperplanes, with early exit against the best
    classifier found so far, finds the minimum of the 0-1 loss over *all* affine classifiers,
    not a surrogate's. Exact on any data: duplicates (also with conflicting labels), integer
    features, collinear points and ``n_samples <= n_features`` included. The returned model
    is the hard-margin (maximum margin) separator of the optimal labeling in standardized
    features, so ``predict`` on the training data realizes exactly ``training_errors_``.

    Cost: ``C(n_unique, D)`` candidate hyperplanes, each scanned until it provably cannot win,
    so roughly ``n^D``; practical for a few hundred points in 2-3 dimensions or about a
    hundred points in 5-6 dimensions. The search is anytime: a budget returns the best
    classifier found so far, marked not optimal.

    Parameters
    ----------
    method : {"auto", "exact", "iis_cover", "milp"}, default="auto"
        ``"exact"``: the enumeration, which proves optimality; it refuses (with an estimate
        of its size and what to do instead) searches that would take more than a day and
        have no budget, and searches of more than about 2.3e18 candidates (beyond the
        addressable rank range) even with a budget. ``"iis_cover"``: the minimum cover of
        the irreducible infeasible subsystems (sets of points of which one must be
        misclassified) by Benders decomposition, also exact, with a proven lower bound at
        every round; fast in high dimension or with few errors. ``"milp"``: a big-M
        mixed-integer program on HiGHS with bounded weights, stopped after ``time_limit``
        (default 30 s), fast but *not* exact (thin optimal cells are cut off). ``"auto"``:
        a portfolio of ``"iis_cover"`` and ``"exact"`` (the IIS cover first from dimension
        5 on, the enumeration first below), alternating on doubling slices of time and
        sharing the best classifier until one proves it optimal (see
        :func:`exactclf._zero_one._portfolio.solve_portfolio`); beyond the exact range (the
        enumeration predicted to outlast the budget on a large instance) the portfolio
        first improves its incumbents by a local search (exact solves of subsets, scored on
        all points; a run from each incumbent, ``n_jobs`` of them at once) and proves a
        bound from IISs found near its errors (a local cover);
        searches too large to address run the IIS cover alone that way. Without a
        ``time_limit``, where the enumeration cannot finish (predicted to take more than a
        day, or too large to address), the fit gets 30 s (the MILP heuristic's default
        time; with ``max_candidates``, the time those candidates are predicted to take if
        longer): in high dimension the IIS cover often proves the optimum within them; if
        not, the best classifier and its bound are returned with a warning that says so.
    upper_bound : {"auto", "surrogate", "milp"}, default="auto"
        Incumbent that the exact search starts from: the best of the majority class,
        LinearSVC and LogisticRegression (``"surrogate"``), plus the big-M MILP run for at most
        30 s (``"milp"``). ``"auto"`` adds the MILP when the enumeration goes first and has
        more than 1e7 candidates, and beyond the exact range.
    max_candidates : int, default=None
        Search at most this many candidate hyperplanes in each run of the enumeration. A
        count, not a time, yet the timed parts of a fit still depend on the machine's speed
        (the portfolio's slices under ``"auto"``, the MILP incumbent, the local search
        beyond the exact range, the quick lower bound after the stop): only
        ``method="exact"`` with ``upper_bound="surrogate"`` within the exact range returns
        the same model on every machine (its bound may still differ). It does not bound the
        IIS cover: where the enumeration cannot finish and no ``time_limit`` is given,
        ``"auto"`` stops at the time said under ``method``.
    time_limit : float, default=None
        Stop the search after this many seconds (wall clock, whole fit; the checks of the
        certificate come after it, outside the limit). Unless the IIS cover runs
        (it has its own bound), a tenth of it is kept for a quick lower bound, spent only
        if the search stops before a proof. Where the fit stops depends on the
        machine's speed and load: two fits cut short by it may return different models
        and bounds (each valid).
    mip_solver : {"auto", "highs", "gurobi"}, default="auto"
        The solver of the IIS cover's master, the set-cover MIP that proves the bound:
        HiGHS, or Gurobi from the optional extra ``exactclf[gurobi]`` (2-10x faster on
        those MIPs). ``"auto"`` takes Gurobi where it is installed and licensed and HiGHS
        otherwise. Where Gurobi's licence refuses the model (the free pip licence: more
        than 2000 rows or columns), the fit goes on with HiGHS (with a warning when
        ``"gurobi"`` was asked for). The proof is the same either way, though where
        several models are optimal the two solvers may return different ones; the big-M
        MILP incumbent and the partition bounds use HiGHS.
    device : {"auto", "cpu", "gpu"}, default="auto"
        ``"cpu"``: Numba kernel. ``"gpu"``: its Numba CUDA counterpart (CuPy array code
        where Numba cannot compile kernels; extra ``exactclf[gpu]``). ``"auto"``: the GPU
        only when one is usable and the search is large enough to win there (candidates
        times points at least ``exactclf._backend.GPU_BREAK_EVEN["ice"]``, measured).
    n_jobs : int, default=None
        Parallel workers over chunks of the candidate space (joblib; ``-1``: all cores).
        Under ``joblib.parallel_config(backend="dask")`` the chunks run on a Dask cluster.
        Any number of workers returns the same model of a search that completes; beyond the
        exact range the workers also run that many local searches at once (processes, or
        the Dask cluster), whose results depend on the clock as any budget-stopped search's.
    verbose : int, default=0
        ``>= 1`` prints the incumbent and a progress bar (rate, ETA, best so far) to stderr.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, as in scikit-learn: an error on a sample of class ``c``
        costs its sample weight times ``class_weight[c]`` (``"balanced"``:
        ``n_samples / (2 * n_samples_of_c)``). The optimum and the certificate are over
        those weights; the certificate's ``objective`` says so.
    max_features : int or None, default=None
        Use at most this many features: the fit minimizes the weighted training errors over
        the affine classifiers ``sign(w.x + b)`` with at most ``max_features`` nonzero
        entries in ``w``, and proves that minimum (the certificate's ``model_class`` says
        so; ``coef_`` is zero outside the features used). None, or at least the number of
        features: no constraint, the ordinary fit. A rule on fewer features is a rule on
        any larger subset that holds them, so the search runs over the
        ``C(n_features, max_features)`` subsets of exactly ``max_features`` features:
        ``max_features=1`` is an exact scan of each feature's thresholds; from 2 on, each
        subset is an ordinary fit on those features (with these parameters; under a
        ``time_limit``, the time left), the subsets holding the best single features first,
        and a subset whose conflicting duplicates already cost as many errors as the best
        rule found is ruled out unsearched. The cost is that of up to
        ``C(n_features, max_features)`` fits in ``max_features`` dimensions. A budget stop
        returns the best rule found with the least proven bound of the subsets (those not
        searched contribute their conflicting duplicates); ``fit_trace_`` has a row per
        subset searched.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has feature names that are all strings.
    certificate_ : Certificate
        What the fit proves (:class:`exactclf._certificate.Certificate`), re-checked by
        :func:`exactclf.verify`; its witness is the IIS cover's infeasible subsystems (with
        exact Farkas multipliers) when that cover proved the bound. The attributes
        ``training_errors_``, ``is_optimal_``, ``lower_bound_``, ``lower_bound_method_``,
        ``gap_``, ``stop_reason_`` and ``fit_time_`` are views of it.
    training_errors_ : float
        Weighted number of training errors of the fitted model (realized by ``predict``).
    is_optimal_ : bool
        True when the search is complete: ``training_errors_`` is then the minimum over all
        affine classifiers.
    lower_bound_ : float
        A proven lower bound on the minimum; equals ``training_errors_`` when optimal, except
        where the IIS cover proved it: there within a relative ``2e-6`` (its solver's
        tolerance), which rounds up to the errors themselves for integer weights totalling
        less than about ``5e5``.
    lower_bound_method_ : str
        How ``lower_bound_`` was obtained.
    gap_ : float
        Relative gap ``(training_errors_ - lower_bound_) / training_errors_`` (0 when
        ``training_errors_`` is 0); 0 when optimal.
    upper_bound_ : float
        Errors of the incumbent the search started from.
    upper_bound_source_ : str
        Which classifier gave ``upper_bound_``.
    n_candidates_ : int
        Candidate hyperplanes searched (with ``max_features``: summed over the subsets
        searched, plus the cuts of the single-feature threshold scans).
    n_candidates_total_ : int
        Size of the complete search (with ``max_features``: of the subsets searched).
    fit_trace_ : list of TraceRow
        Where the fit's time went: a row per stage run (the incumbent heuristics, each turn
        of the enumeration and of the IIS cover, the local search and bounds beyond the
        exact range, the quick bound), with ``stage``, ``start`` and ``seconds`` (from the
        start of ``fit``), the ``incumbent`` and the proven ``bound`` after it, and ``stop``
        (why it ended). ``row._asdict()`` gives a row as a dict; ``verbose`` prints each row
        as it ends (see :doc:`/user_guide/budgets`). With ``max_features``: a row per subset
        searched (stage ``"subset (0, 3)"``), whose ``bound`` is that subset's.
    method_ : str
        The method that produced the model (``"exact"``, ``"iis_cover"`` or ``"milp"``).
    device_ : str
        The backend used (``"cpu"`` or ``"gpu"``).
    stop_reason_ : StopReason or None
        ``"max_candidates"``, ``"time_limit"`` or ``"interrupted"`` when the search stopped
        early (a :class:`~exactclf._certificate.StopReason`, equal to that text); None
        otherwise.
    fit_time_ : float
        Seconds spent in ``fit``.

    See Also
    --------
    sklearn.svm.LinearSVC : hinge-loss surrogate, fast but not 0-1 optimal.
    sklearn.multiclass.OneVsRestClassifier : wrap ICEClassifier for more than two classes.

    References
    ----------
    X. He, M. Rahman and M. A. Little, "ICE: an efficient exact algorithm for the 0-1
    loss linear classification problem" (incremental cell enumeration).

    Examples
    --------
    >>> from exactclf import ICEClassifier
    >>> from exactclf.datasets import load_voicepath
    >>> X, y = load_voicepath(return_X_y=True)
    >>> clf = ICEClassifier().fit(X, y)
    >>> clf.training_errors_, clf.is_optimal_
    (19.0, True)
    >>> int((clf.predict(X) != y).sum())
    19

    The best rule on one of the two features, proven:

    >>> one = ICEClassifier(max_features=1).fit(X, y)
    >>> one.training_errors_, one.is_optimal_, int((one.coef_ != 0).sum())
    (49.0, True, 1)
    """

    _parameter_constraints: dict = {
        "method": [StrOptions({"auto", "exact", "iis_cover", "milp"})],
        "upper_bound": [StrOptions({"auto", "surrogate", "milp"})],
        "max_candidates": [Interval(Integral, 1, None, closed="left"), None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "mip_solver": [StrOptions({"auto", "highs", "gurobi"})],
        "device": [StrOptions({"auto", "cpu", "gpu"})],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "max_features": [Interval(Integral, 1, None, closed="left"), None],
        "monotonic_cst": ["array-like", dict, None],
    }

    def __init__(
        self,
        method="auto",
        upper_bound="auto",
        max_candidates=None,
        time_limit=None,
        mip_solver="auto",
        device="auto",
        n_jobs=None,
        verbose=0,
        class_weight=None,
        max_features=None,
        monotonic_cst=None,
    ):
        self.class_weight = class_weight
        self.max_features = max_features
        self.monotonic_cst = monotonic_cst
        self.method = method
        self.upper_bound = upper_bound
        self.max_candidates = max_candidates
        self.time_limit = time_limit
        self.mip_solver = mip_solver
        self.device = device
        self.n_jobs = n_jobs
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    @guarded_fit
    def fit(self, X, y, sample_weight=None):
        """Find the affine classifier with the fewest weighted training errors (on at most
        ``max_features`` features).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; an error on sample ``i`` costs ``sample_weight[i]``.

        Returns
        -------
        self : ICEClassifier
        """
        return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        t0 = time.perf_counter()
        data = validate_binary(self, X, y, sample_weight)
        if self.mip_solver == "gurobi":  # a missing extra fails here, not after a search
            import_gurobipy("mip_solver='gurobi'")
        signs = monotone_signs(self)
        if signs is not None:
            check_monotone_fit(self.method)
        if self.max_features is not None and self.max_features < data.X.shape[1]:
            fit_feature_subsets(self, data, y, sample_weight, t0)
            return self
        if signs is not None and data.frame.dim > 0:
            fit_monotone(self, data, y, sample_weight, t0, signs, _MILP_SECONDS)
            return self
        total = search_size(len(data.U), data.frame.dim) if data.frame.dim else 0
        self.n_candidates_total_ = total
        # "auto": the GPU only where the scan is large enough to pay for it
        backend = resolve_device(self.device, "ice", total * len(data.U))
        self.device_ = "gpu" if backend.name == "gpu" else "cpu"
        self.method_ = self._choose_method(total, data.Z, data.wpos, data.wneg)
        self._limit = self._fit_time_limit(total)
        trace = FitTrace(t0, type(self).__name__, self.verbose)
        proof = self._search(data, backend, t0, trace)
        self.n_candidates_ = proof.n_candidates
        self.fit_trace_ = list(trace.rows)
        self._set_model(data, proof)
        self._certify(data, proof, t0, y, sample_weight)
        if not self.is_optimal_:
            warn(f"ICEClassifier {self._why_not_proven(proof, total)}: the best classifier "
                 f"found has {self.training_errors_:g} errors; optimality is not proven "
                 f"(lower bound {self.lower_bound_:g}, gap {100 * self.gap_:.1f}%).",
                 ConvergenceWarning)
        return self

    def _search(self, data, backend, t0: float, trace: FitTrace) -> _Proof:
        """The labeling of the unique points that the method found, with what proves it."""
        Z, wpos, wneg = data.Z, data.wpos, data.wneg
        conflicts = conflict_bound(wpos, wneg)
        proof = _Proof(bound=conflicts.value, bound_method=conflicts.method)
        started = time.perf_counter()
        if self.method_ == "milp":
            proof.positive, interrupted = self._fit_milp(Z, wpos, wneg, t0)
            proof.stop = StopReason.INTERRUPTED if interrupted else None
            trace.record("big-M MILP", started, self.upper_bound_, proof.bound,
                         proof.stop or "done")
        elif data.frame.dim == 0:
            # every point coincides: a constant classifier is all an affine one can do, and
            # it errs on each point's lighter label (the conflicting duplicates)
            proof.positive, proof.complete = majority_labeling(wpos, wneg), True
            self.upper_bound_ = labeling_errors(proof.positive, wpos, wneg)
            self.upper_bound_source_ = "majority class"
            trace.record("majority class", started, self.upper_bound_, self.upper_bound_,
                         "proven")
        else:
            res = self._fit_search(data.U, Z, wpos, wneg, backend, t0, trace)
            proof.positive, proof.complete = res.positive, res.complete
            proof.n_candidates = res.n_candidates
            proof.stop = None if res.complete else res.stop_reason
            if res.lower_bound >= proof.bound:
                proof.bound, proof.bound_method = res.lower_bound, res.lower_bound_method
                proof.cuts, proof.farkas = res.iis, res.farkas
        proof.witnessed = None if proof.cuts is None else iis_witness(
            data.X, data.y == self.classes_[1], data.U, np.where(wpos > wneg, 1, -1),
            proof.cuts, known=proof.farkas)
        if not data.frame.certifiable:
            # the geometric decisions of the search are not reliable on these points; IISs
            # with exact multipliers on the samples are, whatever the frame, so their bound
            # stands where the frame is ill-conditioned (else only the conflicting duplicates)
            proof.complete = False
            if proof.witnessed is None:
                proof.bound, proof.bound_method = conflicts.value, conflicts.method
            proof.stop = proof.stop or StopReason.THIN_POINTS
        return proof

    def _set_model(self, data, proof: _Proof) -> None:
        """``coef_`` and ``intercept_``: the maximum-margin plane of the labeling, in the
        original units; ``proof`` loses its completeness where float64 cannot realize it."""
        Z, wpos, wneg, frame = data.Z, data.wpos, data.wneg, data.frame
        value = labeling_errors(proof.positive, wpos, wneg)
        try:
            a, b = max_margin_separator(Z, proof.positive)
        except UnrealizableLabeling as err:  # a margin float64 cannot realize: not proven
            (a, b), proof.positive = err.plane, err.realized
            value, proof.complete = labeling_errors(proof.positive, wpos, wneg), False
            proof.stop = StopReason.UNREALIZABLE_MARGIN
        coef, intercept = frame.to_original(a, b)
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([intercept])
        proof.realized = self._realized_errors(
            data, value, in_frame=labeling_errors(Z @ a + b > 0, wpos, wneg))
        if frame.certifiable and not errors_agree(data, proof.realized, value):
            # the frame resolves the points, float64 cannot hold the plane in their units
            proof.complete, proof.stop = False, StopReason.UNREALIZABLE_MARGIN

    def _certify(self, data, proof: _Proof, t0: float, y, sample_weight) -> None:
        """The certificate of the fitted model: its realized errors, the bound its witness
        proves, and whether they meet within the tolerance of that kind of proof."""
        realized, bound = proof.realized, proof.bound
        if proof.complete and (data.frame.dim == 0
                               or proof.bound_method == BoundMethod.EXHAUSTIVE):
            bound = realized
        witnessed = proof.witnessed
        if witnessed is not None and witnessed[1]:
            # the certificate claims what its witness proves: IISs proven only in the frame
            # (without exact multipliers on the samples) do not count
            left_out = set(witnessed[1])
            seconds = _RECHECK_SECONDS if self._limit is None else min(
                _RECHECK_SECONDS, self._remaining(t0))
            kept = [t for k, t in enumerate(proof.cuts) if k not in left_out]
            bound = min(bound, cuts_cover_bound(kept, data.wpos, data.wneg,
                                                time_limit=seconds))
        bound = min(bound, realized)
        witness = self._witness(proof.bound_method, witnessed)
        # what "optimal" means is fixed by the kind of proof (exact for integer weights),
        # not by the tolerance a search stopped at: a cover that closed within HiGHS's
        # slack on weights in the billions is a gap of a few units, reported as one
        rtol = zero_one_rtol(witness.kind, data.sample_weight)
        optimal = bool(realized - bound <= rtol * abs(realized))
        if proof.complete and not optimal:
            proof.stop = proof.stop or StopReason.NUMERICAL
        stop = proof.stop
        self.certificate_ = Certificate(
            type(self).__name__,
            affine_model_class(self.max_features, data.X.shape[1], monotone_signs(self)),
            class_weighted(ZERO_ONE_OBJECTIVE, self.class_weight), value=realized,
            bound=bound, bound_method=proof.bound_method, is_optimal=optimal,
            stop_reason=None if stop is None else StopReason(stop),
            fit_time=time.perf_counter() - t0,
            fingerprint=data_fingerprint(data.X, y, sample_weight), n_samples=len(data.X),
            rtol=rtol, witness=witness,
        )

    def _why_not_proven(self, proof: _Proof, total: int) -> str:
        """Why the fit did not prove its optimum, for the warning: what stopped it, and
        where (the last stage of its trace)."""
        stop = proof.stop
        if self.method_ == "milp":
            return "used the MILP heuristic (method='milp')"
        if stop in (StopReason.THIN_POINTS, StopReason.UNREALIZABLE_MARGIN):
            return f"cannot prove its optimum ({stop})"
        if stop == StopReason.TIME_LIMIT and self.time_limit is None:  # the cap
            return (f"stopped within the {self._limit:g} s that a fit without time_limit "
                    f"gets where the exact search cannot finish ({total:.3g} candidate "
                    "hyperplanes); give it a time_limit to search longer")
        where = {Stage.ENUMERATION: f"after {proof.n_candidates} of {total} candidates",
                 Stage.IIS_COVER: "in the IIS cover"}
        stages = [row.stage for row in self.fit_trace_]
        if (BoundMethod.of(proof.bound_method) == BoundMethod.PARTITION
                or Stage.LOCAL_SEARCH in stages):
            return f"stopped early ({stop}) beyond the exact range"
        last = next((where[s] for s in reversed(stages) if s in where), "")
        return f"stopped early ({stop}) {last}".rstrip()

    def _witness(self, bound_method: str, witnessed) -> Witness:
        """The evidence of the certificate's bound that :func:`exactclf.verify` re-checks
        (``witnessed``: :func:`iis_witness` of the IISs of the bound, if it rests on
        some)."""
        if witnessed is not None:
            iis, left_out = witnessed
            note = (f"{len(iis)} IISs, each certified by exact Farkas multipliers on the "
                    "samples; the bound is the minimum weight of errors on a set of members "
                    "that meets every IIS, plus the conflicting duplicates")
            if left_out:
                note += (f"; {len(left_out)} IISs of the cover are left out: they are "
                         "infeasible in the points' affine frame but have no exact "
                         "multipliers in the samples' own coordinates, and the bound is the "
                         "one the others prove")
            return Witness("iis_cover", note, {"iis": iis})
        kind = BoundMethod.of(bound_method)
        if kind == BoundMethod.CONFLICTS:
            return Witness("conflicts", "re-derived from the data: identical samples with "
                           "different labels")
        if kind == BoundMethod.EXHAUSTIVE:
            return Witness("none", "an enumeration proof has no compact witness: the bound "
                           "is the best of every candidate hyperplane, each scanned in full "
                           "or until it provably could not win")
        if kind == BoundMethod.PARTITION:
            return Witness("none", "a partition bound has no compact witness: it is a sum "
                           "of exact optima of blocks of the points, each proven by its own "
                           "search")
        return Witness("none", "the quick lower bound keeps no witness: the IISs it rests "
                       "on are not returned by exactclf._zero_one._bounds")

    # -- helpers of fit --------------------------------------------------------------------
    def _estimated_seconds(self, total: int) -> float:
        return enumeration_seconds(total, self.n_jobs)

    def _fit_time_limit(self, total: int) -> float | None:
        """The fit's time limit: ``time_limit``; without one, :data:`_MILP_SECONDS` for
        ``method="milp"`` and, where ``method="auto"`` cannot finish the enumeration (no
        proof to wait for; a candidate budget does not bound the IIS cover), the longer of
        it and the time ``max_candidates`` candidates are predicted to take."""
        if self.time_limit is not None:
            return self.time_limit
        if self.method_ == "milp":
            return _MILP_SECONDS
        if self.method == "auto" and total and not self._enumeration_finishes(total):
            return max(_MILP_SECONDS, 0.0 if self.max_candidates is None else
                       self._estimated_seconds(self.max_candidates))
        return None

    def _enumeration_finishes(self, total: int) -> bool:
        """Whether ``total`` candidates can be addressed and searched within a day."""
        return total <= MAX_RANK and self._estimated_seconds(total) <= LONGEST_SEARCH

    def _choose_method(self, total: int, Z, wpos, wneg) -> str:
        """The method to run; ``method="exact"`` refuses a search it cannot finish (with a
        quick lower bound of ``Z``, ``wpos``, ``wneg`` in the message)."""
        if total == 0:  # dimension 0: nothing to search
            return "exact"
        if self.method in ("milp", "iis_cover"):
            return self.method
        budget = self.max_candidates is not None or self.time_limit is not None
        if (budget and total <= MAX_RANK) or self._enumeration_finishes(total):
            return "exact"
        if self.method == "auto":
            # beyond the enumeration's reach: the IIS cover, with the local search's
            # incumbents and the local cover's bound (solve_portfolio); the IIS cover may
            # still prove the optimum (in high dimension it often does in seconds)
            return "iis_cover"
        quick = lower_bound(Z, wpos, wneg, time_limit=_REFUSAL_BOUND_SECONDS)
        seconds = self._estimated_seconds(total)
        size = (f"the exact search has {total:.3g} candidate hyperplanes (C(n_unique_points, "
                f"dimension)), about {seconds / 86400:.3g} days here.")
        if total > MAX_RANK:
            msg = (
                f"{size} That is beyond the {MAX_RANK:.3g} candidates the search can address, "
                "even with a budget. Use method='auto' (the IIS cover path) or method='milp' "
                "for a fast heuristic, reduce the number of features, or fit on a subsample."
            )
        else:
            msg = (
                f"{size} Give it a budget (time_limit=... or max_candidates=...) to get the "
                "best classifier found in that budget, use method='milp' for a fast "
                "heuristic, reduce the number of features, or fit on a subsample."
            )
        msg += (" A budget (a time_limit) on method='iis_cover' gives you a bound of about "
                f"{quick.value:g} errors or better (proven here in {quick.elapsed:.2g} s by "
                f"{quick.method}): lower_bound_ and gap_ then say how far the returned "
                "classifier can be from the optimum.")
        raise ValueError("ICEClassifier(method='exact'): " + msg)

    def _fit_milp(self, Z, wpos, wneg, t0) -> tuple[np.ndarray, bool]:
        seconds = self._remaining(t0)
        # the surrogates too: a MILP stopped early can be worse than LogisticRegression
        positive, self.upper_bound_, self.upper_bound_source_, interrupted = best_incumbent(
            Z, wpos, wneg, milp_time_limit=seconds, n_jobs=self.n_jobs)
        if interrupted:
            self._interrupted("the MILP")
        return positive, interrupted

    def _fit_search(self, U, Z, wpos, wneg, backend, t0, trace) -> PortfolioResult:
        res = solve_portfolio(
            U, Z, wpos, wneg,
            method="iis_cover" if self.method_ == "iis_cover" else self.method,
            upper_bound=self.upper_bound,
            backend=backend, max_candidates=self.max_candidates,
            time_limit=self._remaining(t0), n_jobs=self.n_jobs, verbose=self.verbose,
            mip_solver=self.mip_solver, trace=trace,
        )
        self.upper_bound_, self.upper_bound_source_ = res.upper_bound, res.upper_bound_source
        self.method_ = res.method
        if res.stop_reason == StopReason.INTERRUPTED:
            self._interrupted("the search")
        return res

    def _remaining(self, t0: float) -> float | None:
        if self._limit is None:
            return None
        return max(self._limit - (time.perf_counter() - t0), 1e-3)

    def _interrupted(self, where: str) -> None:
        warn(
            f"ICEClassifier interrupted during {where}: returning the best classifier found "
            "so far",
            RuntimeWarning,
        )

    # -- prediction ------------------------------------------------------------------------
    def decision_function(self, X):
        """Signed score ``X @ coef_.T + intercept_``: positive for ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_[0] + self.intercept_[0]
