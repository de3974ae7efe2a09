"""Solvers and duality gaps of the threshold-net Lasso ``min_w L(D w) + beta |w|_1``.

``L`` is a separable convex loss with per-sample weights ``s``:

* ``"squared"``: ``sum_i s_i / 2 (f_i - y_i)^2``,
* ``"logistic"``: ``sum_i s_i log(1 + exp(-y_i f_i))`` (``y`` in ``{-1, +1}``),
* ``"hinge"``: ``sum_i s_i max(0, 1 - y_i f_i)`` (a linear program, solved by HiGHS).

The duality gap is computed here, never taken from a solver's report: from the primal point
alone, or from a dual point a solver returns (the interior-point method's dual QP solution, the
hinge LP's row duals), whichever is given. With the Fenchel dual

    max_theta  -sum_i L_i^*(-theta_i)   subject to   |D^T theta|_inf <= beta,

``theta`` is the negative loss gradient at ``D w`` (squared: ``s (y - f)``; logistic:
``s y sigmoid(-y f)``), scaled down until it is feasible; the dual objective is then
``theta . y - theta^2 / (2 s)`` (squared), ``sum s_i H(theta_i / (s_i y_i))`` with ``H`` the
binary entropy (logistic), ``sum theta_i y_i`` with ``0 <= theta_i y_i <= s_i`` (hinge).
Any feasible ``theta`` lower-bounds the optimum, so ``primal - dual`` bounds the suboptimality.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from ._losses import LOSSES

__all__ = ["IPM_MAX_ENTRIES", "GAP_FLOOR_RTOL", "ipm_fits", "skglm_available", "dual_point",
           "dual_objective", "duality_gap", "solve_lasso", "SolveInfo", "resolve_solver"]

#: duality gaps below this fraction of the zero network's loss are rounding noise (the primal
#: and dual objectives are sums of n terms of that size, each rounded): a smaller ``tol``
#: cannot be certified, and the solvers stop trying there
GAP_FLOOR_RTOL = 1e3 * np.finfo(np.float64).eps
#: a warm-started interior-point solve (a regularization path) starts on a working set:
#: the previous support and the ``WS_FACTOR * support + WS_MIN`` columns most correlated with
#: the previous residual (a path's support grows as beta falls; a missed column costs a
#: re-solve, a spare one little) ...
WS_FACTOR = 2
WS_MIN = 10
#: ... solved again while a left-out column's correlation is within ``WS_MARGIN * beta`` of
#: beta (its dual constraint nearly active), with every column within ``WS_GROW * beta``
#: added (the next ones to enter: fewer re-solves; ``WS_GROW >= WS_MARGIN``)
WS_MARGIN = 1e-6
WS_GROW = 0.1
#: the interior-point method runs while its Newton matrix, ``n`` squared (the dual QP has one
#: variable per point), has at most this many entries (200 MB in float64)
IPM_MAX_ENTRIES = 25 * 10**6


class SolveInfo(NamedTuple):
    """What :func:`solve_lasso` knows about its returned point beyond the gap: ``dual``, the
    feasible dual point that certifies the gap (one entry per row of ``D``), and
    ``budget_spent``, whether a LARS or coordinate-descent call used all of ``max_iter``
    (the interior-point method converges in tens of iterations; its budget is not the
    limit)."""

    dual: np.ndarray
    budget_spent: bool


def ipm_fits(shape: tuple[int, int]) -> bool:
    """Whether the interior-point method's Newton matrix for an ``n x P`` design fits."""
    return shape[0] ** 2 <= IPM_MAX_ENTRIES


def skglm_available() -> bool:
    try:
        import skglm  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_solver(solver: str, loss: str, uniform_weights: bool,
                   shape: tuple[int, int] | None = None) -> str:
    """The solver that runs for ``loss`` on an ``n x P`` design (``shape``; None: not known
    yet): ``"auto"`` is the interior-point method where :func:`ipm_fits`, else LARS
    (squared), skglm where installed and applicable else scikit-learn's liblinear
    (logistic), HiGHS (hinge). Raises on impossible pairs and on an interior-point problem
    too large for memory."""
    if loss == "hinge":
        if solver not in ("auto", "highs"):
            raise ValueError(f"loss='hinge' is solved as a linear program: use solver='highs' "
                             f"or 'auto', not solver={solver!r}.")
        return "highs"
    if solver == "highs":
        raise ValueError(f"solver='highs' solves loss='hinge' only, not loss={loss!r}; use "
                         "solver='skglm' or 'sklearn'.")
    if solver in ("lars", "ipm") and loss != "squared":
        raise ValueError(f"solver={solver!r} solves loss='squared' only, not loss={loss!r}.")
    fits = shape is None or ipm_fits(shape)
    if solver == "ipm" and not fits:
        m = shape[0]
        raise ValueError(
            f"solver='ipm' on {shape[0]} training points x {shape[1]} patterns needs a "
            f"{m} x {m} Newton matrix ({8 * m * m / 2**30:.1f} GiB, more than the "
            f"{IPM_MAX_ENTRIES:.0e}-entry cap); use solver='lars' or 'auto', or fewer "
            "n_arrangements.")
    if solver == "lars" or (solver == "auto" and loss == "squared" and not fits):
        return "lars"
    if solver in ("ipm", "auto") and loss == "squared":
        return "ipm"
    if solver == "skglm":
        if not skglm_available():
            raise ImportError("solver='skglm' needs the skglm package (pip install skglm); "
                              "or use solver='sklearn'.")
        if loss == "logistic" and not uniform_weights:
            raise ValueError("solver='skglm' has no weighted logistic loss; use "
                             "solver='sklearn' with sample_weight.")
        return "skglm"
    if solver == "sklearn":
        return "sklearn"
    use_skglm = skglm_available() and uniform_weights
    return "skglm" if use_skglm else "sklearn"


def dual_point(D, y, theta, beta, loss, s, dual_norm=None) -> np.ndarray:
    """``theta`` made a feasible dual point, as :func:`dual_objective` evaluates it: in the
    domain of the loss's conjugate (``ValueError`` beyond rounding), then scaled into
    ``|D^T theta|_inf <= beta``."""
    theta = np.asarray(theta, dtype=np.float64)
    if not np.all(np.isfinite(theta)):
        raise ValueError("dual point with non-finite entries")
    theta = LOSSES[loss].to_domain(theta, y, s)
    norm = float(np.abs(D.T @ theta).max()) if dual_norm is None else dual_norm(theta)
    return theta * (beta / norm) if norm > beta else theta


def dual_objective(D, y, theta, beta, loss, s, dual_norm=None) -> float:
    """The Fenchel dual objective at ``theta`` after scaling it into the feasible set
    (:func:`dual_point`).

    Feasibility has two parts. The loss's conjugate is finite only on a box (logistic and
    hinge: ``0 <= theta_i y_i <= s_i``; squared: everywhere): a point outside the box is not
    a dual point at all and raises ``ValueError`` (beyond rounding, which is projected onto
    the box). The penalty asks ``|D^T theta|_inf <= beta``: a point above it is multiplied by
    ``beta / |D^T theta|_inf`` (which keeps it in the box, as the box holds 0), and the dual
    objective is evaluated at that scaled point, the one whose feasibility was checked.
    ``dual_norm(theta)``: ``|D^T theta|_inf`` (default: computed with ``D``).

    Any value returned is a lower bound on ``min_w L(D w) + beta |w|_1``.

    Examples
    --------
    >>> D = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> y, s = np.array([1.0, -1.0]), np.ones(2)
    >>> float(dual_objective(D, y, np.array([0.5, -0.5]), 0.1, "hinge", s))  # scaled by 0.2
    0.2
    >>> dual_objective(D, y, np.array([2.0, -0.5]), 0.1, "hinge", s)
    Traceback (most recent call last):
    ...
    ValueError: dual point outside the domain of the hinge loss's conjugate ...
    """
    return LOSSES[loss].dual_value(dual_point(D, y, theta, beta, loss, s, dual_norm), y, s)


def duality_gap(D, y, w, beta, loss, s, theta=None, dual_norm=None, return_dual=False):
    """``(primal, gap)`` at ``w``: ``gap = primal - dual_objective(theta)`` (at least 0);
    with ``return_dual``, ``(primal, gap, dual)``: ``dual`` the feasible dual point the gap
    was evaluated at (:func:`dual_point`).

    ``theta``: a dual candidate (default: the negative loss gradient at ``D w``, which lies
    in the conjugate's domain); ``dual_norm``: as in :func:`dual_objective`."""
    f = D @ w
    primal = float(LOSSES[loss].value(f, y, s).sum() + beta * np.abs(w).sum())
    if theta is None:
        theta = -LOSSES[loss].gradient(f, y, s)
    point = dual_point(D, y, theta, beta, loss, s, dual_norm)
    gap = max(primal - LOSSES[loss].dual_value(point, y, s), 0.0)
    return (primal, gap, point) if return_dual else (primal, gap)


def _solve_skglm(D, y, beta, loss, s, tol, max_iter, w0):
    from skglm import GeneralizedLinearEstimator
    from skglm.datafits import Logistic, Quadratic
    from skglm.penalties import L1
    from skglm.solvers import AndersonCD

    n = len(y)
    if loss == "squared":
        r = np.sqrt(s)
        A, b, datafit = D * r[:, None], y * r, Quadratic()
        alpha = beta / n
    else:  # uniform weights (checked): s_0 * sum_i log(...) + beta |w|_1
        A, b, datafit = D, y, Logistic()
        alpha = beta / (n * s[0])
    # max_epochs bounds each working-set subproblem: at skglm's default (50000) a tol that
    # cannot be reached costs max_iter * 50000 epochs
    solver = AndersonCD(tol=tol, max_iter=max_iter, max_epochs=max_iter, fit_intercept=False,
                        warm_start=w0 is not None)
    est = GeneralizedLinearEstimator(datafit, L1(alpha=alpha), solver)
    if w0 is not None:
        est.coef_ = w0[None, :].copy() if loss == "logistic" else w0.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(np.asfortranarray(A), b)
    return np.asarray(est.coef_, dtype=np.float64).ravel(), int(getattr(est, "n_iter_", 0))


def _solve_sklearn(D, y, beta, loss, s, tol, max_iter, w0):
    n = len(y)
    if loss == "squared":
        from sklearn.linear_model import Lasso

        r = np.sqrt(s)
        est = Lasso(alpha=beta / n, fit_intercept=False, tol=tol, max_iter=max_iter,
                    warm_start=w0 is not None)
        if w0 is not None:
            est.coef_ = w0.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(np.asfortranarray(D * r[:, None]), y * r)
        return est.coef_.ravel().astype(np.float64), int(est.n_iter_)
    from sklearn.linear_model import LogisticRegression

    # liblinear shuffles its coordinates: a fixed seed makes a fit (and its gap) repeatable
    est = LogisticRegression(C=1.0 / beta, l1_ratio=1.0, solver="liblinear",
                             fit_intercept=False, tol=tol, max_iter=max_iter, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(D, y, sample_weight=s)
    return est.coef_.ravel().astype(np.float64), int(np.max(est.n_iter_))


def _solve_lars(D, y, beta, s, max_iter):
    """The exact homotopy (LARS-Lasso) path down to ``beta``.

    Returns ``(w, n_iter, reliable)``: ``reliable`` is False when scikit-learn's LARS warned
    that it broke down. Arrangement designs are degenerate (0/1 entries, exact ties between
    correlations, linearly dependent columns: a pattern, its complement and the all-ones
    column); there LARS may stop early with an uncontrolled step, returning huge
    cancelling coefficients (objective far above that of ``w = 0``) that are no use even as a
    warm start."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LassoLars

    r = np.sqrt(s)
    est = LassoLars(alpha=beta / len(y), fit_intercept=False, max_iter=max_iter)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(D * r[:, None], y * r)
    reliable = not any(issubclass(c.category, ConvergenceWarning) for c in caught)
    return est.coef_.ravel().astype(np.float64), int(est.n_iter_), reliable


def _piqp_lasso(D, y, beta, s, eps, max_iter):
    """One solve of the Lasso by PIQP's dense interior-point method at PIQP tolerance
    ``eps``, on the smaller of its two QPs (the Newton matrix is ``n x n`` for the dual,
    ``2P x 2P`` for the primal). The dual (one variable per point)::

        min_theta  sum theta^2 / (2 s) - y . theta   s.t.   -beta <= D^T theta <= beta,

    whose two rows' multipliers ``z_u``, ``z_l`` give the Lasso's ``w = z_u - z_l``
    (stationarity: ``theta = s (y - D w)``); a column is active where its row's slack is
    below its multiplier. The primal, when ``2P <= n`` (a narrow design: a working set)::

        min_{u, v >= 0}  1/2 |D (u - v) - y|_s^2 + beta 1.(u + v),

    with ``w = u - v`` and ``theta`` its weighted residual; a column is active where ``u`` or
    ``v`` is above its bound's multiplier.

    Returns ``(w, theta, active, n_iter)``."""
    import piqp

    n, P = D.shape
    solver = piqp.DenseSolver()
    solver.settings.verbose = False
    solver.settings.eps_abs = solver.settings.eps_rel = eps
    solver.settings.max_iter = max_iter
    if 2 * P <= n:
        Q = D.T @ (s[:, None] * D)
        b = D.T @ (s * y)
        solver.setup(np.asfortranarray(np.block([[Q, -Q], [-Q, Q]])),
                     np.concatenate([beta - b, beta + b]), x_l=np.zeros(2 * P),
                     x_u=np.full(2 * P, np.inf))
        solver.solve()
        r = solver.result
        x = np.asarray(r.x, dtype=np.float64)
        w = x[:P] - x[P:]
        free = np.asarray(r.s_bl) > np.asarray(r.z_bl)
        return w, s * (y - D @ w), free[:P] | free[P:], int(r.info.iter)
    # by keyword: a PIQP whose setup lacks two-sided rows (h_l <= G x <= h_u) fails loudly
    solver.setup(np.asfortranarray(np.diag(1.0 / s)), -y, G=np.asfortranarray(D.T),
                 h_l=np.full(P, -beta), h_u=np.full(P, beta))
    solver.solve()
    r = solver.result
    z_u, z_l = np.asarray(r.z_u), np.asarray(r.z_l)
    active = (z_u > np.asarray(r.s_u)) | (z_l > np.asarray(r.s_l))
    return z_u - z_l, np.asarray(r.x, dtype=np.float64), active, int(r.info.iter)


def _solve_ipm(D, y, beta, s, target, max_iter):
    """The Lasso by :func:`_piqp_lasso`. Degenerate designs (duplicate, complementary or
    dependent columns, tied correlations) only make the optimal ``w`` non-unique; an interior
    point method converges inside the optimal face regardless. PIQP's own tolerance is
    tightened until exactclf's duality gap of ``(w, theta)`` (the dual point checked feasible
    for every column) is at most ``target``, or stops improving.

    Returns ``(w, theta, active, n_iter, reliable)`` at the point of smallest gap;
    ``active``: the columns that may carry weight (the support).
    """
    P = D.shape[1]
    best_gap, best, n_iter = np.inf, None, 0
    for eps in (1e-6, 1e-8, 1e-10, 1e-12):
        w, theta, active, it = _piqp_lasso(D, y, beta, s, eps, max_iter)
        n_iter += it
        if not (np.all(np.isfinite(theta)) and np.all(np.isfinite(w))):
            break
        _, gap = duality_gap(D, y, w, beta, "squared", s, theta=theta)
        if gap >= best_gap:
            break  # the floating-point floor
        best_gap = gap
        best = (w, theta, active)
        if gap <= target:
            break
    if best is None:
        zero = np.zeros(P)
        return zero, np.zeros(len(y)), np.zeros(P, dtype=bool), n_iter, False
    w, theta, active = best
    return w, theta, active, n_iter, bool(best_gap <= target)


def _working_set(D, y, s, w0):
    """The working set (a mask of columns) that a solve warm started from ``w0``, the
    solution at a nearby larger beta, begins with: see :data:`WS_FACTOR`."""
    support = np.flatnonzero(w0)
    corr = np.abs(D.T @ (s * (y - D @ w0)))
    k = min(D.shape[1], WS_FACTOR * len(support) + WS_MIN)
    keep = np.zeros(D.shape[1], dtype=bool)
    keep[support] = True
    keep[np.argpartition(-corr, k - 1)[:k]] = True
    return keep


def _solve_ipm_screened(D, y, beta, s, target, max_iter, keep):
    """:func:`_solve_ipm` on the columns ``keep`` (a working set), grown until its dual
    point satisfies every dual constraint of the whole dictionary.

    After each solve the correlations ``|D^T theta|`` of every column are checked (the KKT
    check of the screening): while a left-out column's is within :data:`WS_MARGIN` of
    ``beta``, the columns within :data:`WS_GROW` join and the solve is repeated, so no column
    that may carry weight at the optimum (the optimal face that the vertex step searches) is
    left out. The certificate does not rest on this: the caller's duality gap scales
    ``theta`` into the dual constraints of the whole dictionary. Returns
    :func:`_solve_ipm`'s tuple, indexed by the whole dictionary's columns."""
    P = D.shape[1]
    n_iter = 0
    while True:
        cols = np.flatnonzero(keep)
        w_ws, theta, active_ws, it, reliable = _solve_ipm(D[:, cols], y, beta, s, target,
                                                          max_iter)
        n_iter += it
        corr = np.abs(D.T @ theta)
        # an unreliable solve (its own gap above target) is grown as well: a gap left by
        # missing columns would otherwise send the whole dictionary to the fallbacks
        if not np.any(~keep & (corr >= (1.0 - WS_MARGIN) * beta)):
            break
        keep = keep | (corr >= (1.0 - WS_GROW) * beta)
    w, active = np.zeros(P), np.zeros(P, dtype=bool)
    w[cols], active[cols] = w_ws, active_ws
    return w, theta, active, n_iter, reliable


def _sparsest_on_face(D, w, theta, active):
    """A vertex of the optimal face through ``w``: an interior-point solution uses every
    column that may carry weight; the basic solution of ``min 1.z`` s.t.
    ``D_A diag(sign) z = D_A w_A``, ``z >= 0`` over the active, sign-consistent columns ``A``
    has the same fitted values, no larger l1 norm and at most ``rank(D)`` non-zeros (HiGHS
    simplex; no LP when those columns are linearly independent, as ``w_A`` is then the
    face's only point). Returns ``w`` unchanged where the LP fails."""
    from scipy.optimize import linprog

    sign = np.sign(D.T @ theta)
    cols = np.flatnonzero(active & (sign * w > 0))
    A = D[:, cols] * sign[cols]
    out = np.zeros_like(w)
    if len(cols) <= len(D) and np.linalg.matrix_rank(A) == len(cols):
        out[cols] = w[cols]  # independent columns: the only point of the face, a vertex
        return out
    res = linprog(np.ones(len(cols)), A_eq=A, b_eq=A @ np.abs(w[cols]), bounds=(0, None),
                  method="highs")
    if res.x is None:
        return w
    out[cols] = sign[cols] * res.x
    return out


def _solve_highs_hinge(D, y, beta, s, time_limit=None):
    """``min sum s xi + beta 1.(u + v)`` s.t. ``xi_i >= 1 - y_i (D (u - v))_i``, all >= 0."""
    from scipy import sparse
    from scipy.optimize import linprog

    n, P = D.shape
    YD = sparse.csr_matrix(D * y[:, None])
    A = sparse.hstack([-YD, YD, -sparse.identity(n)], format="csr")
    c = np.concatenate([np.full(2 * P, beta), s])
    options = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    if time_limit is not None:
        options["time_limit"] = time_limit
    res = linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=(0, None), method="highs",
                  options=options)
    if res.x is None:
        raise RuntimeError(f"HiGHS failed on the hinge-loss LP: {res.message}")
    w = res.x[:P] - res.x[P:2 * P]
    theta = y * np.clip(-res.ineqlin.marginals, 0.0, s)
    return w, int(getattr(res, "nit", 0)), theta


def _unit(x: float) -> float:
    """The largest power of two at most ``x`` (1 for ``x = 0``): division by it is exact in
    binary floating point (barring underflow), so a problem rescaled by it is the same
    problem, rounding included, and one already in units of 1 is left as it is."""
    return float(np.ldexp(1.0, np.frexp(x)[1] - 1)) if x > 0 else 1.0


def solve_lasso(D, y, beta, loss, solver, s, tol=1e-6, max_iter=1000, w0=None,
                return_info=False):
    """Minimize ``L(D w) + beta |w|_1`` until the relative duality gap (gap divided by the
    loss at ``w = 0``) is at most ``tol``.

    ``w0``: a starting point (e.g. the solution at a nearby larger ``beta``, as along a
    path), returned at once when its own gap already meets ``tol`` (so is the zero network,
    for ``beta`` at or above ``|D^T grad L(0)|_inf``); coordinate descent starts from it,
    and the interior-point method solves on a working set seeded from it (its support and
    the columns most correlated with its residual), grown by a KKT check over the whole
    dictionary until no left-out column's dual constraint is (nearly) active.

    ``"ipm"`` and ``"lars"`` are direct methods for the squared loss; when one misses
    ``tol`` the problem goes to the other (the interior-point method only while
    :func:`ipm_fits`), then to coordinate descent (skglm where installed, else
    scikit-learn), warm started from the direct method's point unless that method failed
    or did worse than ``w = 0``. Coordinate descent tightens its own tolerance (warm started)
    up to three times while its gap improves and is above the floating-point floor
    (:data:`GAP_FLOOR_RTOL`). When no method reaches ``tol``, the point of smallest gap is
    returned (``converged`` False). An interior-point solution is moved to a vertex of the
    optimal face (at most ``rank(D)`` non-zero weights) when that keeps the gap within
    ``tol``.

    The solvers run in units where the largest weight ``s`` and (squared loss) the largest
    ``|y|`` lie in ``[1, 2)``, so the fit does not depend on the units of the targets or
    of the weights.

    Returns ``(w, n_iter, primal, gap, converged)`` in the units of ``y`` and ``s``; with
    ``return_info``, ``(w, n_iter, primal, gap, converged, info)``, ``info`` the
    :class:`SolveInfo` of the returned point.

    Examples
    --------
    >>> D = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    >>> y = np.array([1.0, -1.0, 1.0])
    >>> w, _, primal, gap, ok = solve_lasso(D, y, 0.1, "squared", "sklearn", np.ones(3))
    >>> ok, round(primal, 4), np.round(w, 3)
    (True, 0.285, array([ 0.9,  0. , -1.8]))
    """
    # the solvers' stopping rules are absolute (PIQP's eps_abs, HiGHS's feasibility tolerances,
    # skglm's KKT violation, the face LP's equality rows in the units of w): applied in these
    # units they are relative to the problem's scale, as a certificate's tolerances must be.
    # Targets x t, weights x c and beta x c t are the same Lasso in units of c t^2
    s_unit = _unit(float(np.max(s)))
    y_unit = _unit(float(np.max(np.abs(y)))) if loss == "squared" else 1.0
    w, n_iter, primal, gap, converged, info = _solve_unit_scale(
        D, y / y_unit, beta / (s_unit * y_unit), loss, solver, s / s_unit, tol, max_iter,
        None if w0 is None else w0 / y_unit)
    unit = s_unit * y_unit**2
    out = (w * y_unit, n_iter, primal * unit, gap * unit, converged)
    # a dual point is in the units of the loss's gradient: weights x targets
    return (*out, info._replace(dual=info.dual * (s_unit * y_unit))) if return_info else out


def _solve_unit_scale(D, y, beta, loss, solver, s, tol, max_iter, w0):
    """:func:`solve_lasso` on a problem in the units it chooses; returns its tuple and the
    :class:`SolveInfo` of the returned point."""
    loss0 = float(LOSSES[loss].value(np.zeros(len(y)), y, s).sum())
    target = tol * max(loss0, 1e-300)
    if loss == "hinge":
        w, n_iter, theta = _solve_highs_hinge(D, y, beta, s)
        primal, gap, theta = duality_gap(D, y, w, beta, loss, s, theta=theta, return_dual=True)
        return w, n_iter, primal, gap, gap <= target, SolveInfo(theta, False)
    n_iter, spent = 0, False
    w = w0
    # every method's point is certified by its own gap; the smallest one is returned when
    # none reaches tol (a later fallback may end worse than an earlier method). Each
    # candidate is (w, primal, gap, dual point)
    zero = np.zeros(D.shape[1])
    best = (zero, *duality_gap(D, y, zero, beta, loss, s, return_dual=True))
    if w0 is not None:
        start = (w0, *duality_gap(D, y, w0, beta, loss, s, return_dual=True))
        if start[2] < best[2]:
            best = start
    if best[2] <= target:  # the start (or the zero network) is already certified
        return best[0], 0, best[1], best[2], True, SolveInfo(best[3], False)
    direct = {"ipm": ["ipm", "lars"], "lars": ["lars", "ipm"]}.get(solver, [])
    for method in direct:
        if method == "ipm" and not ipm_fits(D.shape):
            continue
        if method == "lars":
            w, it, reliable = _solve_lars(D, y, beta, s, max_iter)
            spent |= it >= max_iter
            primal, gap, dual = duality_gap(D, y, w, beta, loss, s, return_dual=True)
        else:
            if w0 is None:
                w, theta, active, it, reliable = _solve_ipm(D, y, beta, s, 1e-2 * target,
                                                            max_iter)
            else:
                w, theta, active, it, reliable = _solve_ipm_screened(
                    D, y, beta, s, 1e-2 * target, max_iter, _working_set(D, y, s, w0))
            primal, gap, dual = duality_gap(D, y, w, beta, loss, s, theta=theta,
                                            return_dual=True)
            vertex = _sparsest_on_face(D, w, theta, active)
            # the same dual point: only the primal point moves
            v_primal, v_gap = duality_gap(D, y, vertex, beta, loss, s, theta=theta)
            if v_gap <= max(gap, target):
                w, primal, gap = vertex, v_primal, v_gap
        n_iter += it
        if gap <= target:
            return w, n_iter, primal, gap, True, SolveInfo(dual, spent)
        if gap < best[2]:
            best = (w, primal, gap, dual)
        if not reliable or primal >= loss0:
            w = None
    if direct:
        solver = "skglm" if skglm_available() else "sklearn"
    run = _solve_skglm if solver == "skglm" else _solve_sklearn
    inner_tol, last = tol, np.inf
    for _ in range(4):
        if best[2] <= GAP_FLOOR_RTOL * loss0:
            break  # at the floating-point floor: no solver certifies a smaller gap
        w, it = run(D, y, beta, loss, s, inner_tol, max_iter, w)
        n_iter += it
        spent |= it >= max_iter
        primal, gap, dual = duality_gap(D, y, w, beta, loss, s, return_dual=True)
        if gap <= target:
            return w, n_iter, primal, gap, True, SolveInfo(dual, spent)
        if gap < best[2]:
            best = (w, primal, gap, dual)
        if gap >= last:  # no progress: the floating-point floor (or the budget) is reached
            break
        inner_tol, last = inner_tol * 1e-2, gap
    w, primal, gap, dual = best
    return w, n_iter, primal, gap, False, SolveInfo(dual, spent)
