"""Solvers and duality gaps of the threshold-net Lasso ``min_w L(D w) + beta |w|_1``.

``L`` is a separable convex loss with per-sample weights ``s``:

* ``"squared"``: ``sum_i s_i / 2 (f_i - y_i)^2``,
* ``"logistic"``: ``sum_i s_i log(1 + exp(-y_i f_i))`` (``y`` in ``{-1, +1}``),
* ``"hinge"``: ``sum_i s_i max(0, 1 - y_i f_i)`` (a linear program, solved by HiGHS).

The duality gap is computed here from the primal point alone (or, for the hinge LP, from the
LP's row duals), never taken from a solver: with the Fenchel dual

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

__all__ = ["LOSSES", "SOLVERS", "QP_MAX_ENTRIES", "skglm_available", "primal_objective",
           "duality_gap", "solve_lasso", "resolve_solver"]

LOSSES = ("squared", "logistic", "hinge")
SOLVERS = ("auto", "closed_form", "lars", "qp", "skglm", "sklearn", "highs")
#: the QP fallback of LARS is tried on designs with at most this many entries (n x P)
QP_MAX_ENTRIES = 10**5


def skglm_available() -> bool:
    try:
        import skglm  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_solver(solver: str, loss: str, uniform_weights: bool) -> str:
    """The solver that runs for ``loss``: ``"auto"`` is LARS (squared), skglm where
    installed and applicable else scikit-learn's liblinear (logistic), HiGHS (hinge).
    Raises on impossible pairs."""
    if loss == "hinge":
        if solver not in ("auto", "highs"):
            raise ValueError(f"loss='hinge' is solved as a linear program: use solver='highs' "
                             f"or 'auto', not solver={solver!r}.")
        return "highs"
    if solver == "highs":
        raise ValueError(f"solver='highs' solves loss='hinge' only, not loss={loss!r}; use "
                         "solver='skglm' or 'sklearn'.")
    if solver in ("lars", "qp") and loss != "squared":
        raise ValueError(f"solver={solver!r} solves loss='squared' only, not loss={loss!r}.")
    if solver == "qp":
        return "qp"
    if solver == "lars" or (solver == "auto" and loss == "squared"):
        return "lars"
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


def duality_gap(D, y, w, beta, loss, s, theta=None, dual_norm=None) -> tuple[float, float]:
    """``(primal, gap)`` at ``w``; ``theta``: a dual candidate (default: from ``w``);
    ``dual_norm(theta)``: ``|D^T theta|_inf`` (default: computed with ``D``)."""
    f = D @ w
    primal = float(_loss_values(f, y, s, loss).sum() + beta * np.abs(w).sum())
    if theta is None:
        if loss == "squared":
            theta = s * (y - f)
        elif loss == "logistic":
            theta = s * y * 0.5 * (1.0 - np.tanh(0.5 * y * f))  # s y sigmoid(-y f)
        else:
            theta = y * s * (y * f < 1.0)
    norm = float(np.abs(D.T @ theta).max()) if dual_norm is None else dual_norm(theta)
    if norm > beta:
        theta = theta * (beta / norm)
    if loss == "squared":
        dual = float(np.sum(theta * y - theta**2 / (2.0 * s)))
    elif loss == "logistic":
        dual = float(np.sum(s * _entropy(np.clip(theta * y / s, 0.0, 1.0))))
    else:
        dual = float(np.sum(np.clip(theta * y, 0.0, s)))
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
    solver = AndersonCD(tol=tol, max_iter=max_iter, fit_intercept=False,
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


def _solve_qp(D, y, beta, s):
    """The Lasso's dual, a quadratic program in ``n`` variables, on HiGHS's active-set QP
    solver: ``min_theta sum theta^2 / (2 s) - y . theta`` s.t. ``-beta <= D^T theta <= beta``;
    the Lasso weights are the multipliers of the ``P`` range rows (``w = -row duals``).

    Exact up to floating point whatever the degeneracy of ``D``; its cost grows quickly with
    ``n`` and ``P`` (a fallback for small designs). Returns ``(w, n_iter, reliable)``."""
    import highspy
    from scipy import sparse

    n, P = D.shape
    A = sparse.csc_matrix(D.T)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, P
    lp.col_cost_ = -y
    lp.col_lower_ = np.full(n, -highspy.kHighsInf)
    lp.col_upper_ = np.full(n, highspy.kHighsInf)
    lp.row_lower_ = np.full(P, -beta)
    lp.row_upper_ = np.full(P, beta)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr
    lp.a_matrix_.index_ = A.indices
    lp.a_matrix_.value_ = A.data
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, P
    hessian = highspy.HighsHessian()
    hessian.dim_ = n
    hessian.format_ = highspy.HessianFormat.kTriangular
    hessian.start_ = np.arange(n + 1, dtype=np.int32)
    hessian.index_ = np.arange(n, dtype=np.int32)
    hessian.value_ = 1.0 / s
    model = highspy.HighsModel()
    model.lp_ = lp
    model.hessian_ = hessian
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    # the active-set method can cycle on degenerate designs (seen on 4 points x 13 patterns)
    h.setOptionValue("qp_iteration_limit", 20 * (n + P) + 100)
    h.passModel(model)
    h.run()
    reliable = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    w = -np.asarray(h.getSolution().row_dual, dtype=np.float64)
    return w, int(h.getInfo().qp_iteration_count), reliable


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

    ``"lars"`` and ``"qp"`` are direct methods; when one misses ``tol`` (LARS breaks down on
    degenerate designs) the problem goes on to the next: LARS to the QP while
    ``D`` has at most ``QP_MAX_ENTRIES`` entries, then to coordinate descent (skglm where
    installed, else scikit-learn), warm started from the direct method's point unless that
    method failed or did worse than ``w = 0``. Coordinate descent tightens its own tolerance
    (warm started) up to three times.

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
    direct = []
    if solver == "lars":
        direct = ["lars", "qp"] if D.size <= QP_MAX_ENTRIES else ["lars"]
    elif solver == "qp":
        direct = ["qp"]
    for method in direct:
        if method == "lars":
            w, it, reliable = _solve_lars(D, y, beta, s, max_iter)
        else:
            w, it, reliable = _solve_qp(D, y, beta, s)
        n_iter += it
        primal, gap = duality_gap(D, y, w, beta, loss, s)
        if gap <= target:
            return w, n_iter, primal, gap, True
        if not reliable or primal >= loss0:
            w = None
    if direct:
        solver = "skglm" if skglm_available() else "sklearn"
    run = _solve_skglm if solver == "skglm" else _solve_sklearn
    inner_tol = tol
    for _ in range(4):
        w, it = run(D, y, beta, loss, s, inner_tol, max_iter, w)
        n_iter += it
        primal, gap = duality_gap(D, y, w, beta, loss, s)
        if gap <= target:
            return w, n_iter, primal, gap, True
        inner_tol *= 1e-2
    return w, n_iter, primal, gap, False
