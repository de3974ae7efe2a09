"""Constraint and column generation for the 0-1 minimax risk classifier (MRC) LP.

The math (everything below is re-derived here; notation of the design document):

* Features ``Phi(x, y) = e_y (x) psi(x)`` of dimension ``m = K d``; ``tau`` is the mean of
  ``Phi(x_i, y_i)`` over the training samples and ``lambda = s std(Phi(x_i, y_i)) / sqrt(n)``
  (population standard deviation, coordinate-wise). The uncertainty set ``U`` holds the
  distributions whose feature expectation lies within ``tau +- lambda``; it contains the
  empirical distribution.
* For a parameter ``mu`` (viewed as a ``K x d`` matrix, ``v_y(x) = psi(x)^T mu_y``) let
  ``nu(mu) = max_i max_{C != {}} (sum_{y in C} v_y(x_i) - 1) / |C| + 1``. The worst-case 0-1 risk
  over ``U`` of the rule below is at most ``R(mu) = -tau^T mu + lambda^T |mu| + nu(mu)``, and the
  MRC is ``mu* = argmin R``. With ``mu = mu1 - mu2`` this is the LP

      min  -(tau - lambda)^T mu1 + (tau + lambda)^T mu2 + nu
      s.t. F_(i,C) (mu1 - mu2) - nu <= 1/|C| - 1   for every sample i and subset C,
           mu1, mu2 >= 0,

  ``F_(i,C) = sum_{y in C} Phi(x_i, y)^T / |C|``, with ``n (2^K - 1)`` rows.
* The inner maximum over subsets is exact and cheap: for a fixed size k the best C holds the k
  largest ``v_y``, so sorting ``v`` once and scanning the prefix sums finds the most violated
  subset of every sample in ``O(K log K)``.
* Rule: ``h(y|x) = (v_y(x) - nu + 1)_+ / c_x`` with ``c_x`` the sum over ``y`` (uniform when
  ``c_x = 0``). On every training input ``c_x <= 1`` by definition of ``nu``, so
  ``h(y|x) >= v_y(x) - nu + 1`` and for every ``p`` in ``U`` *supported on the training
  inputs*: ``E_p[1 - h(y|x)] <= nu - E_p Phi^T mu <= R(mu)``. (At other inputs ``c_x`` may
  exceed 1 and the bound does not follow.) The empirical distribution is such a ``p``, hence
  the *expected training 0-1 error of the randomized rule* ``predict_proba`` is at most
  ``R(mu)``. The deterministic rule ``predict`` (an argmax of ``v``, hence of ``h``) errs
  only where ``h(y|x) <= 1/2`` for the true ``y``, so its expected 0-1 error under the same
  ``p`` is at most twice the randomized rule's: at most ``2 R(mu)``, not ``R(mu)``.
* Lower bound: for any weights ``alpha >= 0`` on rows, summing to 1, ``R(mu) >=
  D(alpha) + sum_j (z_j mu_j + lambda_j |mu_j|)`` with ``D(alpha) = sum alpha_r (1 - 1/|C_r|)``
  and ``z = F^T alpha - tau``; so ``R* >= D(alpha)`` when ``|z| <= lambda``, and mixing in
  the empirical distribution (``z = 0``, ``D = 0``) repairs any violation at a proportional
  cost (:func:`~._bounds.dual_lower_bound`). The restricted LP's row duals, priced over *every*
  feature, give a rigorous bound however the generation stopped.

Algorithm: one persistent LP -- the LP above restricted to the generated constraints (rows)
and the active features (columns ``mu1_j, mu2_j``, plus ``nu``) -- starts with one implied
constraint per class (the average of that class's singleton rows, which keeps every restricted
LP bounded: the class proportions are a feasible dual) and with all features (or, when there
are more than ``m_max``, the ``m_max`` with the largest class-mean deviation). With
:data:`~._smooth.SMOOTH_MIN_CLASSES` classes or more, the generation starts instead at the best
point of a smoothed risk (:func:`~._smooth.smoothed_start`, at most a quarter of
``time_limit``): the features where it is not 0 join, the rows of the samples most violated
there start the LP, and the box is centred there (:meth:`ZeroOneProgram.start_from`); rows
are then sought between the best iterate and the LP's (:meth:`ZeroOneProgram._rows_to_add`).
Each iteration re-solves it warm from the previous basis with the dual simplex (a wide LP
by the dense interior point method of :mod:`._ipm`, warm from an iterate of the previous
dense solve, or HiGHS' after many new rows where it
is too large to store densely: :meth:`ZeroOneProgram._method`), evaluates
the most violated subset of *every* training sample, adds the ``n_max`` most violated
constraints (violation > ``eps1``) and, with column generation, the ``m_max`` features whose
dual constraint ``|F^T alpha - tau| <= lambda`` is violated by more than ``eps2``
(``alpha``: the negated row duals). Rows that have stayed inactive are deleted
(:class:`~._rows.RowPool`). Every iterate is certified both ways: ``R(mu)``, evaluated
exactly over all samples and subsets, and ``D``, the dual bound above over all features;
``lower_ = max D``. ``upper_`` is the
smallest certified ``R`` found: of the iterates and, since ``R`` is convex, of points on the
segment from the best point so far to each iterate that is worse than it
(:func:`best_on_segment`; with many classes the first iterates overshoot far, ``R`` rising
above the uniform rule's, and the segment holds better points), so ``upper_`` falls with
every iteration and a stopped generation returns a useful model.
When no row is violated by more than ``eps1`` and no feature by more than ``eps2``, but the
bound is still more than ``eps1`` below ``upper_`` (features violated by less than ``eps2``
cost the bound ``D`` in proportion to their violation), every violated feature is added and
the generation goes on; so on convergence ``R* in [lower_, upper_]`` and ``upper_ - lower_
<= eps1`` (up to the LP solver's tolerance).

Box step (:mod:`._box`): every solve keeps ``mu`` in a box around the best iterate so far
(not the best point of a segment: centred there, the box saves the generation no
iterations and can cost it some),
whose radius grows while the box binds and the steps pay (``R`` falls by half what the LP
model promised; or after a few steps in a row that did not); the generation never ends while
it binds, and the certificates do not depend on it. The last solve's dual point
(``CCGResult.dual_rows``) is the certificate's where it proves ``R*`` to its tolerance.

With many classes (after the smoothed start) the restricted LP holds whole samples instead
of subset rows (:class:`~._samples.SampleProgram`, where :func:`~._samples.whole_samples_fit`):
the same generation, certificates and box, but a sample joins once with all its subsets.

The measurements behind this form (primal LP, dual simplex, row deletion, the box step) are in
``benchmarks/results/mrc_ccg_history.txt``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from .._backend import REFERENCE, Backend
from .._certificate import StopReason
from ._bounds import dual_lower_bound
from ._ipm import dense_mrc_ipm, warm_or_cold
from ._lp import LPResult, make_lp
from ._program import _SEPARATION_STEP, _START_RADIUS, _START_ROWS, _START_SHARE, ScoredProgram
from ._rows import RowPool, lp_columns, lp_costs, row_coefficients, row_upper
from ._samples import NotSolved, SampleProgram, whole_samples_fit
from ._smooth import SMOOTH_MIN_CLASSES, smoothed_start
from ._training import TrainingSet

__all__ = ["mrc_ccg", "CCGResult", "run_generation", "ZeroOneProgram", "best_on_segment"]


@dataclass
class CCGResult:
    """Outcome of :func:`mrc_ccg` (in the coordinates of the ``Psi`` it was given)."""

    mu: np.ndarray
    upper: float
    nu: float
    lower: float
    n_iter: int
    converged: bool
    R_history: list = field(default_factory=list)
    upper_history: list = field(default_factory=list)
    lower_history: list = field(default_factory=list)
    n_constraints: int = 0
    n_lp_rows: int = 0
    active_features: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    lp_solver: str = "highs"
    max_violation: float = 0.0
    stop_reason: str | None = None
    #: ``(sample, Q, values, alpha, class_alpha)``: the rows weighted by the last solve's dual
    #: and their weights (0-1 loss), the certificate's dual point where it proves enough, its
    #: start otherwise (:func:`~._bounds.dual_point`'s ``seed``)
    dual_rows: tuple | None = None


def run_generation(program, max_iter: int, time_limit: float | None,
                   t_start: float, start=None) -> CCGResult:
    """The generation loop of both losses: solve, certify, extend, until nothing is violated.

    ``program`` is the restricted program, with ``solve(it, remaining)`` (solve it within
    ``remaining`` seconds, None: no limit, and return the iterate ``(R(mu), mu, nu)`` certified
    over all samples, or None when the time limit stopped the solver), ``bound()`` (a lower
    bound on ``R*`` from the last solve), ``extend(it, best, lower)`` (add what the last iterate
    violates, given the best iterate and bound so far; True when nothing is: converged),
    ``risk(mu)`` (``(R(mu), mu, nu)``), ``segment(mu0, mu1)`` (:func:`best_on_segment`) and
    the fields ``max_violation``, ``n_constraints``, ``n_lp_rows``, ``active_features``,
    ``lp_solver`` and ``dual_rows`` of the result.

    ``start`` (None: none) is called before the first solve with a function that it calls
    with every certified point ``(R(mu), mu, nu)`` it finds (:func:`~._smooth.smoothed_start`):
    the best of them is the best point so far, also when the time limit or Ctrl-C stops the
    start itself.

    ``max_iter``, ``time_limit`` (seconds since ``t_start``, a :func:`time.perf_counter`
    value) and ``KeyboardInterrupt`` (Ctrl-C) stop the generation; the result is then the best
    certified point so far (an iterate or a point of :func:`best_on_segment`; ``mu = 0``, the
    uniform rule, before the first solve), with the best lower bound so far and
    ``stop_reason`` saying why. ``R_history`` holds each iterate's certified ``R``,
    ``upper_history`` that of the best point after every iteration (non-increasing) and
    ``lower_history`` each iterate's bound.

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf.mrc import mrc_statistics
    >>> Psi, y = np.c_[np.ones(5), [1.0, 2.0, 3.0, 5.0, 6.0]], np.array([1, 0, 1, 0, 0])
    >>> data = TrainingSet(Psi, y, 2, *mrc_statistics(Psi, y, 2, 0.3))
    >>> program = ZeroOneProgram(data, eps1=1e-9, eps2=1e-9, n_max=10, m_max=10, tol=1e-9)
    >>> res = run_generation(program, 100, 0.0, time.perf_counter())  # no time: mu = 0
    >>> str(res.stop_reason), res.n_iter, res.upper  # the uniform rule's certified risk
    ('time_limit', 0, 0.5)
    >>> res = run_generation(program, 100, None, time.perf_counter())
    >>> res.converged, res.stop_reason, bool(res.upper - res.lower < 1e-7)
    (True, None, True)
    """
    best = best_iterate = dual_rows = None
    R_hist, U_hist, L_hist = [], [], []
    converged = False
    stop_reason = StopReason.MAX_ITER
    lower = 0.0  # R* >= 0: the empirical distribution is a feasible dual point

    def record(point):
        nonlocal best, best_iterate
        if best is None or point[0] < best[0]:
            best = best_iterate = point

    try:
        if start is not None:
            start(record)
        for it in range(1, max_iter + 1):
            remaining = None
            if time_limit is not None:
                remaining = time_limit - (time.perf_counter() - t_start)
                if remaining <= 0.0:
                    stop_reason = StopReason.TIME_LIMIT
                    break
            iterate = program.solve(it, remaining)
            if iterate is None:
                stop_reason = StopReason.TIME_LIMIT
                break
            R, mu, nu = iterate
            if best_iterate is None or R < best_iterate[0]:
                best_iterate = (R, mu.copy(), nu)
            # R is convex in mu: the segment from the best point so far to this iterate holds
            # points better than both where the iterate overshoots (the box step, whose
            # center stays the best iterate, keeps the LP's trajectory of its own)
            if best is None or R < best[0]:
                best = best_iterate
            else:
                best = best_on_segment(program, best, mu)
            R_hist.append(R)
            U_hist.append(best[0])
            bound = program.bound()
            if bound > lower:  # (the certificate starts from the best bound's dual rows)
                lower, dual_rows = bound, program.dual_rows
            L_hist.append(bound)
            if program.extend(it, best_iterate, lower):
                converged = True
                stop_reason = None
                break
    except KeyboardInterrupt:
        stop_reason = StopReason.INTERRUPTED

    if best is None:  # stopped before the first solution: the uniform rule mu = 0
        best = program.risk(np.zeros(program.data.m))
    R, mu, nu = best
    return CCGResult(
        mu=mu, upper=R, nu=nu, lower=float(lower), n_iter=len(R_hist), converged=converged,
        R_history=R_hist, upper_history=U_hist, lower_history=L_hist,
        n_constraints=program.n_constraints, n_lp_rows=program.n_lp_rows,
        active_features=program.active_features,
        lp_solver=program.lp_solver, max_violation=program.max_violation,
        stop_reason=stop_reason,
        dual_rows=program.dual_rows if dual_rows is None else dual_rows,
    )


#: most evaluations of R in :func:`best_on_segment`: steps down to 2^-10 of the segment
_SEGMENT_EVALUATIONS = 10


def best_on_segment(program, best, mu_new, n_eval: int = _SEGMENT_EVALUATIONS):
    """A point of the segment from ``best`` to ``mu_new`` with a smaller certified ``R``, or
    ``best``.

    ``R`` is convex in ``mu``, so where the new iterate is worse than ``best`` (the early LP
    iterates of a fit with many classes jump far past the optimum, ``R`` rising tenfold) the
    segment may still hold points better than both. The step ``t = 2^-n_eval`` is tried
    first: if it gains nothing, by convexity no longer step does; else halving ``t`` from 1/2
    finds a better point, and the halving stops once ``R`` rises again (by convexity it goes
    on rising). The values along the segment
    come from ``program.segment(mu0, mu1)`` (a cheap ``t -> R`` where it has one); the point
    found is then re-evaluated exactly by ``program.risk`` and returned only if that certified
    value is below ``best``'s.

    Parameters
    ----------
    program
        With ``segment(mu0, mu1)`` and ``risk(mu)`` (``(R(mu), mu, nu(mu))``, certified).
    best : tuple
        ``(R, mu, nu)`` of the best point so far.
    mu_new : ndarray
        The other end of the segment (assumed no better than ``best``).
    n_eval : int
        The shortest step tried is ``2^-n_eval``; at most ``n_eval`` evaluations.

    Returns
    -------
    tuple
        ``(R, mu, nu)``.

    Examples
    --------
    >>> import numpy as np
    >>> class Program:
    ...     def risk(self, mu):
    ...         return float(abs(mu[0] - 0.3) + 1.0), mu, 0.0
    ...     def segment(self, mu0, mu1):
    ...         return lambda t: self.risk(mu0 + t * (mu1 - mu0))[0]
    >>> program = Program()
    >>> R, mu, _ = best_on_segment(program, program.risk(np.zeros(1)), np.ones(1))
    >>> R, float(mu[0])  # t = 1/4: the first halving after which R rises
    (1.05, 0.25)
    """
    R_at = program.segment(best[1], mu_new)
    # convexity: where the shortest step gains nothing no longer one does (the usual case
    # near convergence, which then costs one evaluation)
    t_min = 0.5**n_eval
    R_min = R_at(t_min)
    if R_min >= best[0]:
        return best
    t_best, R_best, t = t_min, R_min, 0.5
    while t > t_min:
        R = R_at(t)
        if R < R_best:
            t_best, R_best = t, R
        elif t_best > t_min:
            break
        t *= 0.5
    point = program.risk(best[1] + t_best * (mu_new - best[1]))
    return point if point[0] < best[0] else best


#: LP columns (2 per active feature, and nu) from which a solve after many new rows is by
#: the interior point method (:meth:`ZeroOneProgram._method`)
_IPM_COLUMNS = 2000
#: such solves are by the dense interior point method of :mod:`._ipm` (on HiGHS) up to this
#: many entries of the dense row matrix and of the normal matrix (rows x rows; 8 bytes each,
#: the method holds about three of each), to this share of ``eps1`` (at least this relative
#: tolerance; ``tol`` where smaller): the generation stops at ``eps1``, and its bound, priced
#: from the duals, loses about the tolerance; a tighter tolerance than the bound needs costs
#: iterations of every solve
_DENSE_IPM_ENTRIES, _DENSE_IPM_SHARE, _DENSE_IPM_TOL = 2e7, 1e-2, 1e-8
#: after a smoothed start, LPs from this many columns go to the dense method where the rows'
#: subsets hold this share of the classes on average (:meth:`ZeroOneProgram._method`)
_DENSE_COLUMNS, _DENSE_SHARE = 1000, 0.4


class ZeroOneProgram(ScoredProgram):
    """The persistent restricted LP of the 0-1 MRC (module docstring), as
    :func:`run_generation` steps it: its columns are ``nu`` and ``mu1, mu2`` of the active
    features, its rows a :class:`~._rows.RowPool`, and a :class:`~._box.Box` bounds the
    columns around the best iterate. New rows keep the previous basis dual feasible, and after
    new feature columns the dual simplex repairs their few dual infeasibilities faster than the
    primal simplex. Parameters as for :func:`mrc_ccg`; :func:`run_generation` has an example.
    """

    def __init__(self, data: TrainingSet, *, eps1: float, eps2: float, n_max: int, m_max: int,
                 lp_solver: str = "highs", tol: float = 1e-6, backend: Backend = REFERENCE,
                 verbose: int = 0):
        super().__init__(data, eps1=eps1, n_max=n_max, tol=tol, backend=backend,
                         verbose=verbose)
        self.eps2, self.m_max = eps2, m_max
        self.active = self._initial_features()
        self.is_active = np.zeros(data.m, dtype=bool)
        self.is_active[self.active] = True
        self.lp = make_lp(lp_solver, tol=tol, verbose=verbose)
        # column 0: nu (free); columns 1 + 2p, 2 + 2p: mu1, mu2 of feature active[p]
        n_cols = 1 + 2 * len(self.active)
        self.lp.add_cols(np.r_[1.0, lp_costs(data.tau, data.lam, self.active)],
                         np.r_[-np.inf, np.zeros(n_cols - 1)], np.full(n_cols, np.inf))
        # per class, the (weighted) average of its singleton rows: implied by the MRC LP, and
        # with the class proportions as alpha the dual is feasible: bounded from the start
        self.rows = RowPool(self.lp, data.centroids, self.active, data.B, data.sparse)
        self._new_rows = 0  # rows added since the last solve
        self._warm = None  # (WarmStart, its rows' keys) of the last dense solve

    def _initial_features(self) -> np.ndarray:
        """All features, or the ``m_max`` with the largest class-mean deviation."""
        data = self.data
        if data.m <= self.m_max:
            return np.arange(data.m)
        w, lam = data.w, data.lam
        mean_psi = np.asarray(data.Psi.T @ w).ravel() / w.sum()
        dev = np.abs(data.tau - np.outer(data.class_weight / w.sum() @ data.B, mean_psi).ravel())
        score = np.where(lam > 0, dev / np.where(lam > 0, lam, 1.0), np.where(dev > 0, np.inf, 0))
        return np.sort(np.argsort(-score, kind="stable")[:self.m_max])

    @property
    def n_lp_rows(self) -> int:
        return self.lp.n_rows

    @property
    def lp_solver(self) -> str:
        return self.lp.name  # "highs" after a fallback from Gurobi

    @property
    def active_features(self) -> np.ndarray:
        return np.sort(self.active)

    def _method(self) -> str:
        """The LP method of the next solve: for a wide LP (:data:`_IPM_COLUMNS`), the dense
        interior point method of :mod:`._ipm` on HiGHS (such LPs are dense and wide, which
        the sparse codes, IPX and the simplex alike, handle poorly); otherwise, or where it
        is too large to store densely, the interior point method after many new rows, where
        the dual simplex needs thousands of pivots even from the previous basis, and the warm
        dual simplex after few (with few classes the two are about equal; with many the
        interior point method wins). Measured in ``benchmarks/results/mrc_multiclass.txt``.

        After a smoothed start (many classes) the dense method takes LPs from
        :data:`_DENSE_COLUMNS` columns already where their rows are dense: where the
        subsets hold :data:`_DENSE_SHARE` of the classes or more (below it the rows are
        sparse enough for the dual simplex to pivot fast, and the dense method loses)."""
        rows, cols = self.lp.n_rows, self.lp.n_cols

        def at_least(columns):  # (and a quarter as many rows)
            return cols >= columns and rows >= columns // 4

        wide = at_least(_IPM_COLUMNS)
        subsets = self.rows.M[self.data.K:]  # (the class rows hold one class each)
        dense_rows = (self._step < 1.0 and at_least(_DENSE_COLUMNS)
                      and subsets.size > 0 and subsets.mean() >= _DENSE_SHARE)
        if (wide or dense_rows) and self._dense_fits(rows, len(self.active)):
            return "dense"
        return "ipm" if wide and self._new_rows >= self.n_max // 2 else "dual"

    def _dense_fits(self, rows: int, features: int) -> bool:
        """Whether :func:`~._ipm.dense_mrc_ipm` may take an LP of this many rows and active
        features (on HiGHS only: Gurobi's own barrier stays where a user asked for it)."""
        return (self.lp.name == "highs"
                and rows * max(features, rows) <= _DENSE_IPM_ENTRIES)

    def _dense_ipm(self, remaining):
        """The restricted LP solved by :func:`~._ipm.dense_mrc_ipm` as an :class:`LPResult`
        (rows with a slack above their dual count as basic), or None where it did not
        converge."""
        data, active = self.data, self.active
        F = row_coefficients(self.rows.U, self.rows.M, active, data.d, data.B).toarray()
        cost = lp_costs(data.tau, data.lam, active)
        ub = self.box.bounds(active)[1]
        args = (F, row_upper(self.rows.M), cost[0::2], cost[1::2], ub[0::2], ub[1::2])
        tol = min(self.tol, max(_DENSE_IPM_TOL, _DENSE_IPM_SHARE * self.eps1))
        start = self._warm_start()
        # (a warm start that stalls is repeated cold, before HiGHS)
        ipm = warm_or_cold(partial(dense_mrc_ipm, *args, tol=tol), start, remaining)
        self._warm = None if ipm.warm is None else (ipm.warm, list(self.rows.keys))
        if not (ipm.converged or ipm.time_limit_reached):
            return None
        x = np.empty(1 + 2 * len(active))
        x[0], x[1::2], x[2::2] = ipm.nu, ipm.x1, ipm.x2
        col_dual = np.zeros_like(x)
        col_dual[1::2], col_dual[2::2] = ipm.d1, ipm.d2
        return LPResult("Optimal" if ipm.converged else "Time limit reached", ipm.converged, x,
                        -ipm.y, ipm.objective, ipm.iterations, ipm.s > ipm.y,
                        ipm.time_limit_reached, col_dual)

    def _warm_start(self):
        """The last dense solve's kept iterate (:class:`~._ipm.WarmStart`) with its rows
        matched to the LP's by their keys, or None (no dense solve yet, or new features)."""
        if self._warm is None or len(self._warm[0].x1) != len(self.active):
            return None
        warm, keys = self._warm
        where = {key: i for i, key in enumerate(keys) if key is not None}
        old = np.array([i if key is None else where.get(key, -1)
                        for i, key in enumerate(self.rows.keys)])
        return warm.rows_for(old)

    def solve(self, it, remaining):
        self.box.apply(self.lp, self.active)
        method = self._method()
        res = self._dense_ipm(remaining) if method == "dense" else None
        if res is None:  # (a dense solve that failed falls back on HiGHS' interior point)
            res = self.lp.solve("ipm" if method == "dense" else method, time_limit=remaining)
        if res.time_limit_reached:
            return None
        if not res.optimal:
            raise RuntimeError(
                f"the restricted MRC LP was not solved to optimality by {self.lp.name} "
                f"(status: {res.status}) at iteration {it}; try lp_solver='highs' or "
                "another tol"
            )
        mu = np.zeros(self.data.m)
        mu[self.active] = res.x[1::2] - res.x[2::2]
        self.res, self.mu = res, mu
        self.ev = self._evaluate(mu)
        return self.ev.R, mu, self.ev.nu

    def start_from(self, point) -> None:
        """Start the generation at ``point`` (``(R, mu, nu)``, certified; e.g. of
        :func:`~._smooth.smoothed_start`): every feature where ``mu`` is not 0 becomes active
        (every feature, where the LP will be wide enough for the dense interior point method
        and small enough for its storage: its work grows only linearly in the columns, and an
        inactive feature whose dual constraint is violated by less than ``eps2`` costs the
        bound through the mixing repair, so with every feature the generation closes more
        of the gap), the rows of the :data:`_START_ROWS` ``n_max``
        samples most violated at ``mu`` (their most violated subsets) join the LP, and the
        box is centred there with the radius :data:`_START_RADIUS`."""
        mu = point[1]
        dense = (2 * self.data.m + 1 >= _IPM_COLUMNS
                 and self._dense_fits(self.lp.n_rows + _START_ROWS * self.n_max, self.data.m))
        feats = np.flatnonzero(((mu != 0.0) | dense) & ~self.is_active)
        if len(feats):
            self._add_features(feats)
        self.ev = self._evaluate(mu)
        cand = np.argsort(-self.ev.g, kind="stable")
        self._add_rows(*self.rows.new_rows(cand, self._subsets, _START_ROWS * self.n_max))
        self.box.start_at(point, _START_RADIUS)
        self._step = _SEPARATION_STEP

    def _add_rows(self, idx, masks, keys) -> None:
        """Add the rows of the samples ``idx`` with their subsets ``masks`` (from
        :meth:`~._rows.RowPool.new_rows`) over the active features."""
        self._new_rows = len(idx)
        if idx:
            self.rows.add(self.data.Psi[np.asarray(idx)], np.asarray(masks), keys, self.active)
            self.n_constraints += len(idx)

    def bound(self) -> float:
        """The row duals priced over every feature: a rigorous bound on ``R*``, and per
        feature the violation of its dual constraint ``|F^T alpha - tau| <= lambda``. The
        bound leaves out the rows of :func:`~._bounds.forbidden_labels` (their duals are 0
        at an exact optimum; a rounding-level dual there would cost the whole bound)."""
        data, rows = self.data, self.rows
        alpha = -self.res.row_dual
        # (the features to add are those violated by the LP's own duals)
        bound, self.excess = dual_lower_bound(rows.U, rows.M, alpha, data.tau, data.lam,
                                              data.zero_tol, data.B)
        if data.forbidden is not None:
            K = data.K
            samples = np.array([key[0] for key in rows.keys[K:]], dtype=np.int64)
            weighs = np.r_[np.zeros(K, dtype=bool),
                           np.any(rows.M[K:] & data.forbidden[samples], axis=1)]
            if np.any(weighs & (alpha > 0.0)):
                alpha = np.where(weighs, 0.0, alpha)
                bound, _ = dual_lower_bound(rows.U, rows.M, alpha, data.tau, data.lam,
                                            data.zero_tol, data.B)
        self.dual_rows = rows.dual_rows(alpha)
        return bound

    def _subsets(self, block, ev=None):
        """Masks of the most violated subsets of the samples ``block`` at the evaluation
        ``ev`` (default: the last iterate's): the ``size[i]`` largest scores of each."""
        ev = self.ev if ev is None else ev
        Vb = self.backend.asnumpy(ev.V[self.backend.xp.asarray(block)])
        rank = np.argsort(np.argsort(-Vb, axis=1, kind="stable"), axis=1)
        return rank < ev.size[block][:, None]

    def _rows_to_add(self, best):
        """The rows of the ``n_max`` samples most violated by more than ``eps1`` (ties:
        lowest index), with their most violated subsets. After a start they are sought at
        the point :data:`_SEPARATION_STEP` of the way from the best iterate to the LP's
        (:meth:`~._program.ScoredProgram._separation`). Where fewer than ``n_max``
        new rows are violated there, the rest are sought at the iterate (the generation ends
        only when none is): near the end few rows are violated between the two, and an LP
        solve per handful of rows would slow the convergence
        (benchmarks/results/mrc_multiclass.txt)."""
        res, ev = self.res, self.ev
        if self._step < 1.0:
            at, viol = self._separation(best)
            found = self._most_violated(viol, lambda block: self._subsets(block, at))
            if len(found[0]) >= self.n_max:  # (rows the LP holds already are skipped)
                return found
            more = self._most_violated(ev.g - res.x[0], self._subsets,
                                       self.n_max - len(found[0]))
            return tuple(a + b for a, b in zip(found, more, strict=True))
        return self._most_violated(ev.g - res.x[0], self._subsets)

    def _most_violated(self, viol, subsets, n_max: int | None = None):
        """The new rows of the ``n_max`` (None: ``self.n_max``) samples with ``viol > eps1``,
        most violated first (ties: lowest index), with their subsets (``subsets(block)``)."""
        cand = np.flatnonzero(viol > self.eps1)
        cand = cand[np.argsort(-viol[cand], kind="stable")]
        return self.rows.new_rows(cand, subsets, self.n_max if n_max is None else n_max)

    def _violated_features(self, finishing: bool) -> np.ndarray:
        """The ``m_max`` inactive features most violated by more than ``eps2``."""
        if self.is_active.all():
            return np.empty(0, dtype=np.int64)
        dv = np.where(self.is_active, -np.inf, self.excess)
        cand = np.flatnonzero(dv > self.eps2)
        if finishing and len(cand) == 0:
            # generation is done, but features violated by less than eps2 keep the bound more
            # than eps1 below R(mu): add every violated one
            cand = np.flatnonzero(dv > np.where(self.data.lam > 0.0, 0.0, self.data.zero_tol))
        return np.sort(cand[np.argsort(-dv[cand], kind="stable")][:self.m_max])

    def _add_features(self, feats) -> None:
        data = self.data
        starts, idx, val = lp_columns(self.rows.U, self.rows.M, feats, data.d, data.B)
        self.lp.add_cols(lp_costs(data.tau, data.lam, feats), np.zeros(2 * len(feats)),
                         np.full(2 * len(feats), np.inf), starts, idx, val)
        self.active = np.concatenate([self.active, feats])
        self.is_active[feats] = True

    def extend(self, it, best, lower) -> bool:
        res, ev = self.res, self.ev
        self.box.update(res, ev.R, best, self.tol)
        self.max_violation = float((ev.g - res.x[0]).max())
        new_idx, new_M, new_keys = self._rows_to_add(best)
        new_feats = self._violated_features(not new_idx and best[0] - lower > self.eps1)
        n_deleted = self.rows.age_and_drop(res, bool(new_idx))
        if self.verbose:
            print(
                f"[MRCCCG] iter {it:4d}  LP {res.objective:.8f}  R(mu) {ev.R:.8f}  "
                f"lower {lower:.8f}  max violation {self.max_violation:.2e}  LP "
                f"iterations {res.iterations}  LP rows {self.lp.n_rows}  features "
                f"{len(self.active)}/{self.data.m}  +rows {len(new_idx)}  -rows {n_deleted}  "
                f"+features {len(new_feats)}  {self.box}"
            )
        if not new_idx and len(new_feats) == 0:
            # the restricted LP's optimum may lie outside a binding box
            return not self.box.binds
        if len(new_feats):
            self._add_features(new_feats)
        self._add_rows(new_idx, new_M, new_keys)
        return False


def mrc_ccg(
    Psi,
    y: np.ndarray,
    n_classes: int,
    tau: np.ndarray,
    lam: np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    embedding: np.ndarray | None = None,
    eps1: float = 1e-4,
    eps2: float = 1e-5,
    n_max: int = 200,
    m_max: int = 400,
    max_iter: int = 500,
    lp_solver: str = "highs",
    tol: float = 1e-6,
    time_limit: float | None = None,
    backend: Backend = REFERENCE,
    verbose: int = 0,
    whole_samples: bool | None = None,
) -> CCGResult:
    """Solve the 0-1 MRC LP by constraint (and column) generation over all ``n`` samples.

    The persistent LP (module docstring; :class:`ZeroOneProgram`) is re-solved warm by the dual
    simplex; ``alpha``, the negated row duals, prices every feature: it gives
    :func:`~._bounds.dual_lower_bound` and the features to add. With
    :data:`~._smooth.SMOOTH_MIN_CLASSES` classes or more (and where
    :func:`~._samples.whole_samples_fit`), the restricted LP holds whole samples instead
    (:class:`~._samples.SampleProgram`). ``time_limit`` and ``KeyboardInterrupt`` (Ctrl-C)
    stop the generation (:func:`run_generation`).

    Parameters
    ----------
    Psi : ndarray or scipy.sparse matrix of shape (n_samples, d)
        ``psi(x_i)`` of every training sample (intercept column included, if any).
    y : ndarray of shape (n_samples,)
        Class indices in ``range(n_classes)``; every class must occur.
    n_classes : int
    tau, lam : ndarray of shape (q * d,)
        From :func:`~exactclf.mrc._statistics.mrc_statistics` (same ``sample_weight`` and
        ``embedding``).
    sample_weight : ndarray of shape (n_samples,) or None
        Positive weights (the class-average rows that start the LP are weighted means); None:
        all 1.
    embedding : ndarray of shape (n_classes, q) or None
        ``Phi(x, y) = embedding[y] (x) psi(x)``; None is the one-hot ``e_y`` (``q = K``).
    eps1, eps2, n_max, m_max, max_iter, lp_solver, tol, time_limit, verbose
        See :class:`~exactclf.mrc.MRCCCG`.
    backend : Backend
        Where the scores and most violated subsets of all samples are computed.
    whole_samples : bool or None, default=None
        Whether the restricted LP holds whole samples (:class:`~._samples.SampleProgram`;
        one-hot features only) or subset rows (:class:`ZeroOneProgram`); None: whole samples
        where the smoothed start runs and :func:`~._samples.whole_samples_fit`.

    Returns
    -------
    CCGResult
        ``mu`` is the point with the smallest certified ``R(mu)`` (``upper``): an iterate or
        a point of :func:`best_on_segment`; ``lower`` is
        the largest :func:`~._bounds.dual_lower_bound` of the iterates, a lower bound on ``R*``
        however the generation stopped (``lower_history`` holds that bound per iterate).

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf.mrc import mrc_full_lp, mrc_statistics
    >>> Psi = np.c_[np.ones(6), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]]
    >>> y = np.array([0, 0, 1, 0, 1, 1])
    >>> tau, lam = mrc_statistics(Psi, y, 2, 0.3)
    >>> res = mrc_ccg(Psi, y, 2, tau, lam, eps1=1e-9, tol=1e-9)
    >>> full = mrc_full_lp(Psi, y, 2, tau, lam, tol=1e-9)
    >>> res.converged, abs(res.upper - full.objective) < 1e-7
    (True, True)
    """
    t_start = time.perf_counter()
    data = TrainingSet(Psi, y, n_classes, tau, lam, sample_weight, embedding)
    if whole_samples is None:
        whole_samples = (n_classes >= SMOOTH_MIN_CLASSES
                         and whole_samples_fit(data, n_max, lp_solver, eps1))
    if whole_samples:
        program = SampleProgram(data, eps1=eps1, n_max=n_max, tol=tol, backend=backend,
                                verbose=verbose)
        try:
            return run_generation(program, max_iter, time_limit, t_start,
                                  _start(program, data, eps1, time_limit, t_start, verbose))
        except NotSolved as exc:  # (rounding; not seen on the benchmarks)
            if verbose:
                print(f"[MRCCCG] {exc}: the subset rows' generation takes over")
    program = ZeroOneProgram(data, eps1=eps1, eps2=eps2, n_max=n_max, m_max=m_max,
                             lp_solver=lp_solver, tol=tol, backend=backend, verbose=verbose)
    return run_generation(program, max_iter, time_limit, t_start,
                          _start(program, data, eps1, time_limit, t_start, verbose))


def _start(program, data: TrainingSet, eps1: float, time_limit, t_start: float, verbose: int):
    """The start of :func:`run_generation` for ``program``: the smoothed start with
    :data:`~._smooth.SMOOTH_MIN_CLASSES` classes or more (within :data:`_START_SHARE` of
    ``time_limit``), None otherwise."""
    if data.K < SMOOTH_MIN_CLASSES:
        return None
    deadline = None if time_limit is None else t_start + _START_SHARE * time_limit

    def start(record):
        program.start_from(smoothed_start(data, program.risk, eps1, deadline, record,
                                          verbose))

    return start
