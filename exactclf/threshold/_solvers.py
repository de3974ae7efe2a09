"""Solvers and duality gaps of the threshold-net Lasso ``min_w L(D w) + beta |w|_1``.

``L`` is a separable convex loss with per-sample weights ``s``:

* ``"squared"``: ``sum_i s_i / 2 (f_i - y_i)^2``,
* ``"logistic"``: ``sum_i s_i log(1 + exp(-y_i f_i))`` (``y`` in ``{-1, +1}``),
* ``"hinge"``: ``sum_i s_i max(0, 1 - y_i f_i)`` (a linear program, solved by HiGHS).

The duality gap is computed here, never taken from a solver's report: from the primal point
alone, or from a dual point a solver returns (the interior-point method's iterate, the
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

import numpy as np
from scipy import linalg
from threadpoolctl import threadpool_limits

__all__ = ["LOSSES", "SOLVERS", "IPM_MAX_ENTRIES", "GAP_FLOOR_RTOL", "ipm_fits", "skglm_available",
           "primal_objective", "dual_objective", "duality_gap", "solve_lasso", "resolve_solver"]

LOSSES = ("squared", "logistic", "hinge")
SOLVERS = ("auto", "closed_form", "ipm", "lars", "skglm", "sklearn", "highs")
#: duality gaps below this fraction of the zero network's loss are rounding noise (the primal
#: and dual objectives are sums of n terms of that size, each rounded): a smaller ``tol``
#: cannot be certified, and the solvers stop trying there
GAP_FLOOR_RTOL = 1e3 * np.finfo(np.float64).eps
#: the interior-point method runs while its Newton matrix, ``min(n, P)`` squared, has at most
#: this many entries (200 MB in float64)
IPM_MAX_ENTRIES = 25 * 10**6


def ipm_fits(shape: tuple[int, int]) -> bool:
    """Whether the interior-point method's Newton matrix for an ``n x P`` design fits."""
    return min(shape) ** 2 <= IPM_MAX_ENTRIES


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
        m = min(shape)
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


def _loss_values(f, y, s, loss):
    if loss == "squared":
        return 0.5 * s * (f - y) ** 2
    if loss == "logistic":
        return s * np.logaddexp(0.0, -y * f)
    return s * np.maximum(0.0, 1.0 - y * f)


def primal_objective(D, y, w, beta, loss, s) -> float:
    """``L(D w) + beta |w|_1``."""
    return float(_loss_values(D @ w, y, s, loss).sum() + beta * np.abs(w).sum())


def _entropy(p):
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -(p * np.log(p) + (1 - p) * np.log1p(-p))
    return np.where((p <= 0) | (p >= 1), 0.0, h)


#: a dual point of the logistic or hinge loss must have ``theta_i y_i / s_i`` in ``[0, 1]``;
#: values outside by at most this much are rounding (of ``theta`` computed as ``s y q``) and
#: are projected onto the interval before feasibility is checked; anything further is an error
_DOMAIN_ATOL = 1e-12


def dual_objective(D, y, theta, beta, loss, s, dual_norm=None) -> float:
    """The Fenchel dual objective at ``theta`` after scaling it into the feasible set.

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
    theta = np.asarray(theta, dtype=np.float64)
    if not np.all(np.isfinite(theta)):
        raise ValueError("dual point with non-finite entries")
    if loss != "squared":
        q = theta * y / s
        if np.any(q < -_DOMAIN_ATOL) or np.any(q > 1.0 + _DOMAIN_ATOL):
            raise ValueError(
                f"dual point outside the domain of the {loss} loss's conjugate (theta_i y_i / "
                f"s_i in [{q.min():.3g}, {q.max():.3g}], must lie in [0, 1]): not a dual "
                "point, so it bounds nothing"
            )
        q = np.clip(q, 0.0, 1.0)
        theta = y * s * q
    norm = float(np.abs(D.T @ theta).max()) if dual_norm is None else dual_norm(theta)
    if norm > beta:
        scale = beta / norm
        theta = theta * scale
        if loss != "squared":
            q = q * scale
    if loss == "squared":
        return float(np.sum(theta * y - theta**2 / (2.0 * s)))
    if loss == "logistic":
        return float(np.sum(s * _entropy(q)))
    return float(np.sum(s * q))


def duality_gap(D, y, w, beta, loss, s, theta=None, dual_norm=None) -> tuple[float, float]:
    """``(primal, gap)`` at ``w``: ``gap = primal - dual_objective(theta)`` (at least 0).

    ``theta``: a dual candidate (default: the negative loss gradient at ``D w``, which lies
    in the conjugate's domain); ``dual_norm``: as in :func:`dual_objective`."""
    f = D @ w
    primal = float(_loss_values(f, y, s, loss).sum() + beta * np.abs(w).sum())
    if theta is None:
        if loss == "squared":
            theta = s * (y - f)
        elif loss == "logistic":
            theta = s * y * 0.5 * (1.0 - np.tanh(0.5 * y * f))  # s y sigmoid(-y f)
        else:
            theta = y * s * (y * f < 1.0)
    dual = dual_objective(D, y, theta, beta, loss, s, dual_norm)
    return primal, max(primal - dual, 0.0)


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

    est = LogisticRegression(C=1.0 / beta, l1_ratio=1.0, solver="liblinear",
                             fit_intercept=False, tol=tol, max_iter=max_iter)
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


def _solve_ipm(D, y, beta, s, target, max_iter):
    """The Lasso's dual QP by a primal-dual interior-point method (Mehrotra predictor-corrector)::

        min_theta  sum theta^2 / (2 s) - y . theta   s.t.   a = beta - D^T theta >= 0,
                                                            b = beta + D^T theta >= 0,

    with multipliers ``u``, ``v`` >= 0 of the two rows, whose difference is the Lasso's
    ``w`` (stationarity: ``theta = s (y - D w)``). Each Newton step solves one symmetric
    positive definite system: ``S^-1 + D Sigma D^T`` (n x n) when ``n <= P``, else
    ``Sigma^-1 + D^T S D`` (P x P) for the step in ``w``; ``Sigma = u / a + v / b``.
    Degenerate designs (duplicate, complementary or dependent columns, tied correlations)
    only make the optimal ``w`` non-unique; the method converges to a point inside the
    optimal face regardless. Starts feasible (``theta = 0``) and stays so, so every iterate
    certifies: it stops once the duality gap is at most ``target``, or when the gap stops
    improving (floating-point floor).

    Returns ``(w, theta, active, n_iter, reliable)`` at the iterate of smallest gap;
    ``active``: the dual rows whose slack is below their multiplier (the support).
    """
    n, P = D.shape
    on_points = n <= P
    G = None if on_points else (D.T * s) @ D
    theta, u, v = np.zeros(n), np.ones(P), np.ones(P)
    best_gap, best, stalled, n_iter = np.inf, None, 0, 0
    while n_iter < max_iter:
        Dt = D.T @ theta
        a, b = beta - Dt, beta + Dt
        w = u - v
        _, gap = duality_gap(D, y, w, beta, "squared", s, theta=theta)
        if gap < best_gap:
            best_gap, best, stalled = gap, (w, theta, (u > a) | (v > b)), 0
        else:
            stalled += 1
        # rounding can close a slack (a or b reaches 0) at a tolerance near the float floor:
        # the barrier is undefined there, so stop at the best iterate
        if gap <= target or stalled >= 3 or not (np.all(a > 0) and np.all(b > 0)):
            break
        n_iter += 1
        rd = theta / s - y + D @ w
        sig = u / a + v / b
        if on_points:
            M = (D * sig) @ D.T
            M[np.diag_indices(n)] += 1.0 / s
        else:
            M = G.copy()
            M[np.diag_indices(P)] += 1.0 / sig
        factor = _cholesky(M)
        if factor is None:
            break
        system = (D, s, factor, on_points, rd, sig, a, b, u, v)
        mu = (u @ a + v @ b) / (2 * P)
        da, db, du, dv, _ = _newton(system, -u * a, -v * b)
        tp, td = _step_lengths((a, b, u, v), (da, db, du, dv))
        mu_aff = ((u + td * du) @ (a + tp * da) + (v + td * dv) @ (b + tp * db)) / (2 * P)
        centre = (mu_aff / mu) ** 3 * mu
        da, db, du, dv, dth = _newton(system, centre - u * a - da * du, centre - v * b - db * dv)
        tp, td = _step_lengths((a, b, u, v), (da, db, du, dv))
        theta = theta + 0.99 * tp * dth
        u, v = u + 0.99 * td * du, v + 0.99 * td * dv
    w, theta, active = best
    return w, theta, active, n_iter, bool(best_gap <= target)


def _cholesky(M):
    """Cholesky factor of the Newton matrix ``M``, or None.

    Near the optimum the barrier weights ``u / a`` span many orders of magnitude, and at a
    tolerance near the floating-point floor rounding can make ``M`` numerically indefinite.
    A diagonal shift of ``1e-12`` (then ``1e-8``) times the largest diagonal entry makes it
    definite again; the shifted step is an inexact Newton step, harmless because the step
    lengths keep every iterate feasible and every iterate's gap is computed afresh. None
    when even that fails (or ``M`` is not finite): the caller stops at its best iterate."""
    if not np.all(np.isfinite(M)):
        return None
    top = float(np.max(np.diag(M)))
    # one BLAS thread: threaded Cholesky synchronizes per block and, measured on a busy
    # 2-core machine, ran 10-300x slower (a 500 x 500 factor in 0.5 s instead of 2 ms)
    with threadpool_limits(1, user_api="blas"):
        for shift in (0.0, 1e-12 * top, 1e-8 * top):
            try:
                return linalg.cho_factor(M + shift * np.eye(len(M)) if shift else M)
            except linalg.LinAlgError:
                continue
    return None


def _newton(system, cu, cv):
    """The interior-point step for complementarity targets ``u a + a du + u da = cu`` and
    ``v b + b dv + v db = cv``; returns ``(da, db, du, dv, dtheta)``."""
    D, s, factor, on_points, rd, sig, a, b, u, v = system
    q = cu / a - cv / b
    if on_points:
        dth = linalg.cho_solve(factor, -rd - D @ q)
    else:  # the step in w on the patterns' system, then theta = s (y - D w) linearized
        dth = -s * (rd + D @ linalg.cho_solve(factor, q / sig - D.T @ (s * rd)))
    Ddth = D.T @ dth
    return -Ddth, Ddth, (cu + u * Ddth) / a, (cv - v * Ddth) / b, dth


def _step_lengths(points, steps):
    """The longest steps in ``[0, 1]`` keeping the slacks ``(a, b)`` and the multipliers
    ``(u, v)`` non-negative."""
    lengths = []
    for x, dx in zip(points, steps, strict=True):
        neg = dx < 0
        lengths.append(min(1.0, float(np.min(-x[neg] / dx[neg]))) if neg.any() else 1.0)
    return min(lengths[:2]), min(lengths[2:])


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


def solve_lasso(D, y, beta, loss, solver, s, tol=1e-6, max_iter=1000, w0=None):
    """Minimize ``L(D w) + beta |w|_1`` until the relative duality gap (gap divided by the
    loss at ``w = 0``) is at most ``tol``.

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

    Returns ``(w, n_iter, primal, gap, converged)``.

    Examples
    --------
    >>> D = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    >>> y = np.array([1.0, -1.0, 1.0])
    >>> w, _, primal, gap, ok = solve_lasso(D, y, 0.1, "squared", "sklearn", np.ones(3))
    >>> ok, round(primal, 4), np.round(w, 3)
    (True, 0.285, array([ 0.9,  0. , -1.8]))
    """
    loss0 = float(_loss_values(np.zeros(len(y)), y, s, loss).sum())
    target = tol * max(loss0, 1e-300)
    if loss == "hinge":
        w, n_iter, theta = _solve_highs_hinge(D, y, beta, s)
        primal, gap = duality_gap(D, y, w, beta, loss, s, theta=theta)
        return w, n_iter, primal, gap, gap <= target
    n_iter = 0
    w = w0
    # every method's point is certified by its own gap; the smallest one is returned when
    # none reaches tol (a later fallback may end worse than an earlier method)
    best = (np.zeros(D.shape[1]), *duality_gap(D, y, np.zeros(D.shape[1]), beta, loss, s))
    direct = {"ipm": ["ipm", "lars"], "lars": ["lars", "ipm"]}.get(solver, [])
    for method in direct:
        if method == "ipm" and not ipm_fits(D.shape):
            continue
        if method == "lars":
            w, it, reliable = _solve_lars(D, y, beta, s, max_iter)
            primal, gap = duality_gap(D, y, w, beta, loss, s)
        else:
            w, theta, active, it, reliable = _solve_ipm(D, y, beta, s, 1e-2 * target, max_iter)
            primal, gap = duality_gap(D, y, w, beta, loss, s, theta=theta)
            vertex = _sparsest_on_face(D, w, theta, active)
            v_primal, v_gap = duality_gap(D, y, vertex, beta, loss, s, theta=theta)
            if v_gap <= max(gap, target):
                w, primal, gap = vertex, v_primal, v_gap
        n_iter += it
        if gap <= target:
            return w, n_iter, primal, gap, True
        if gap < best[2]:
            best = (w, primal, gap)
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
        primal, gap = duality_gap(D, y, w, beta, loss, s)
        if gap <= target:
            return w, n_iter, primal, gap, True
        if gap < best[2]:
            best = (w, primal, gap)
        if gap >= last:  # no progress: the floating-point floor (or the budget) is reached
            break
        inner_tol, last = inner_tol * 1e-2, gap
    w, primal, gap = best
    return w, n_iter, primal, gap, False
