"""MRCCCG: the 0-1 minimax risk classifier (MRC), learned by constraint and column generation.

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
  cost (:func:`dual_lower_bound`). The restricted LP's row duals, priced over *every*
  feature, give a rigorous bound however the generation stopped.

Algorithm: one persistent LP -- the LP above restricted to the generated constraints (rows)
and the active features (columns ``mu1_j, mu2_j``, plus ``nu``) -- starts with one implied
constraint per class (the average of that class's singleton rows, which keeps every restricted
LP bounded: the class proportions are a feasible dual) and with all features (or, when there
are more than ``m_max``, the ``m_max`` with the largest class-mean deviation). Each iteration
re-solves it warm from the previous basis with the dual simplex, evaluates the most violated
subset of *every* training sample, adds the ``n_max`` most violated constraints (violation >
``eps1``) and, with column generation, the ``m_max`` features whose dual constraint
``|F^T alpha - tau| <= lambda`` is violated by more than ``eps2`` (``alpha``: the negated row
duals). Rows whose slack has stayed basic for ``_DROP_AFTER`` solves are deleted, but only
after the LP value has risen since the previous deletion (so no cycling), and may be generated
again later. Every iterate is certified both ways: ``upper_ = min R(mu)``, evaluated exactly
over all samples and subsets, and ``lower_ = max D``, the dual bound above over all features.
When no row is violated by more than ``eps1`` and no feature by more than ``eps2``, but the
bound is still more than ``eps1`` below ``upper_`` (features violated by less than ``eps2``
cost the bound ``D`` in proportion to their violation), every violated feature is added and
the generation goes on; so on convergence ``R* in [lower_, upper_]`` and ``upper_ - lower_
<= eps1`` (up to the LP solver's tolerance).

Why this form (measured on ai4i, 10000 samples, 400 random Fourier features, so dense rows):
the LP dual of the above (generated constraints as columns, features as rows: a smaller basis)
needed 5000-18000 primal-simplex pivots per warm re-solve and over 1200 s per fit; in this
form each re-solve takes a few hundred to two thousand dual-simplex pivots. Deleting inactive
rows keeps every pivot cheap (the LP stays near a thousand rows instead of growing by
``n_max`` per iteration). After new feature columns, HiGHS' dual simplex (which repairs the
few dual infeasibilities) re-solves in tens to hundreds of pivots where its primal simplex took
thousands of degenerate ones. Cuts found at the midpoint of the LP point and the best iterate
(in-out stabilization) cost more iterations than they saved in this form.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._backend import REFERENCE, Backend, resolve_device
from .._base import reset_fitted
from ._lp import make_lp, solve_lp
from ._phi import PHI_NAMES, fit_feature_map

__all__ = [
    "MRCCCG",
    "mrc_statistics",
    "dual_lower_bound",
    "most_violated",
    "most_violated_bruteforce",
    "worst_case_error",
    "mrc_ccg",
    "mrc_full_lp",
    "CCGResult",
    "FullLPResult",
]


# --------------------------------------------------------------------------- statistics
def mrc_statistics(Psi: np.ndarray, y: np.ndarray, n_classes: int, s: float):
    """``tau`` (mean of ``Phi(x_i, y_i)``) and ``lambda`` (``s`` times its population std over
    ``sqrt(n)``), both flat of length ``n_classes * d`` in the layout ``y * d + l``.

    Examples
    --------
    >>> import numpy as np
    >>> tau, lam = mrc_statistics(np.ones((4, 1)), np.array([0, 0, 0, 1]), 2, 1.0)
    >>> tau.tolist(), np.round(lam, 4).tolist()
    ([0.75, 0.25], [0.2165, 0.2165])
    """
    n, d = Psi.shape
    onehot = np.zeros((n, n_classes))
    onehot[np.arange(n), y] = 1.0
    # Phi(x_i, y_i) = onehot_i (x) psi_i: mean and second moment without forming n x m arrays
    # (Psi^T onehot)^T, not onehot^T Psi: OpenBLAS is very slow on short-wide x tall products
    first = (Psi.T @ onehot).T / n
    second = ((Psi * Psi).T @ onehot).T / n
    var = np.maximum(second - first * first, 0.0)
    tau = first.ravel()
    lam = s * np.sqrt(var).ravel() / np.sqrt(n)
    return tau, lam


# --------------------------------------------------------------- most violated subsets
@njit(cache=True)
def _most_violated_numba(V):  # pragma: no cover - compiled
    # serial on purpose: ~1 ns per score, far below the LP's cost; a parallel loop was 50x
    # slower on a busy 2-core machine (thread start-up and contention)
    n, K = V.shape
    g = np.empty(n)
    size = np.empty(n, dtype=np.int64)
    work = np.empty((n, K))
    for i in range(n):
        v = work[i]
        for k in range(K):  # insertion sort, descending (K is small)
            x = V[i, k]
            j = k
            while j > 0 and v[j - 1] < x:
                v[j] = v[j - 1]
                j -= 1
            v[j] = x
        best = v[0] - 1.0
        k_best = 1
        acc = v[0]
        for k in range(2, K + 1):
            acc += v[k - 1]
            f = (acc - 1.0) / k
            if f > best:
                best = f
                k_best = k
        g[i] = best + 1.0
        size[i] = k_best
    return g, size


def _most_violated_xp(V, xp):
    K = V.shape[1]
    Vs = -xp.sort(-V, axis=1)
    S = xp.cumsum(Vs, axis=1)
    f = (S - 1.0) / xp.arange(1, K + 1, dtype=V.dtype)
    size = xp.argmax(f, axis=1)
    g = xp.take_along_axis(f, size[:, None], axis=1)[:, 0] + 1.0
    return g, size + 1


def most_violated(V, backend: Backend = REFERENCE):
    """Value and size of the most violated label subset of every sample.

    For scores ``V[i, y] = Phi(x_i, y)^T mu`` returns ``g[i] = max_C (sum_{y in C} V[i, y] - 1)
    / |C| + 1`` (the left-hand side ``F_(i,C) mu - b_C`` of the LP row, maximized over C) and
    the size of the maximizing subset (the smallest one on ties); the subset itself holds the
    ``size[i]`` largest scores. The CPU backend runs a Numba kernel, the others array-generic
    code on ``backend.xp``; all return identical values.

    Examples
    --------
    >>> import numpy as np
    >>> g, size = most_violated(np.array([[0.9, 0.8, -1.0], [0.2, 0.1, 0.0]]))
    >>> np.round(g, 6).tolist(), size.tolist()
    ([1.35, 0.766667], [2, 3])
    """
    if backend.name == "cpu":
        return _most_violated_numba(np.ascontiguousarray(V, dtype=np.float64))
    return _most_violated_xp(V, backend.xp)


def most_violated_bruteforce(V: np.ndarray) -> np.ndarray:
    """``g`` of :func:`most_violated` by enumerating all ``2^K - 1`` subsets (reference)."""
    n, K = V.shape
    best = np.full(n, -np.inf)
    for mask in range(1, 2**K):
        members = [k for k in range(K) if mask >> k & 1]
        best = np.maximum(best, (V[:, members].sum(axis=1) - 1.0) / len(members) + 1.0)
    return best


def worst_case_error(Psi, mu, tau, lam, n_classes: int, backend: Backend = REFERENCE):
    """Certified ``R(mu) = -tau^T mu + lambda^T |mu| + nu(mu)`` over all samples and subsets;
    returns ``(R, nu)``."""
    d = Psi.shape[1]
    xp = backend.xp
    M = xp.asarray(np.ascontiguousarray(mu.reshape(n_classes, d).T))
    g, _ = most_violated(Psi @ M, backend)
    nu = float(backend.asnumpy(g.max()))
    return float(-tau @ mu + lam @ np.abs(mu) + nu), nu


def dual_lower_bound(U, masks, alpha, tau, lam, zero_tol: float = 0.0):
    """A lower bound on ``R*`` from any nonnegative weights ``alpha`` on LP rows.

    Row ``r`` is the constraint of a sample with features ``U[r] = psi(x)`` and label subset
    ``masks[r]`` (or a convex combination of such rows). For weights ``a`` summing to 1 and any
    ``mu``, ``nu(mu) >= sum_r a_r (F_r mu - b_r)``, hence

        R(mu) >= D(a) + sum_j (z_j mu_j + lambda_j |mu_j|),   D(a) = sum_r a_r (1 - 1/|C_r|),
        z = F^T a - tau,

    and ``R* >= D(a)`` when ``|z| <= lambda``. The empirical distribution (weight ``1/n`` on
    every ``(i, {y_i})``) has ``z = 0`` and ``D = 0``; mixing it in with weight ``t`` scales
    ``z`` and ``D`` by ``1 - t``, so the smallest ``t`` with ``(1 - t) |z| <= lambda`` gives
    the bound ``(1 - t) D(a)``. No row or feature needs to be in the LP for this: the bound
    holds for any ``alpha``, priced over *every* feature. On a coordinate with
    ``lambda_j = 0`` no mixing helps; there ``|z_j| <= zero_tol`` (a rounding tolerance: at a
    dual optimum that ``z_j`` is exactly 0) is accepted as zero, a larger ``|z_j|`` gives the
    trivial bound 0.

    Parameters
    ----------
    U : ndarray of shape (n_rows, d)
    masks : ndarray of shape (n_rows, n_classes), bool
    alpha : ndarray of shape (n_rows,)
        Weights (the negated row duals of the restricted LP); clipped at 0 and normalized.
    tau, lam : ndarray of shape (n_classes * d,)
    zero_tol : float, default=0.0

    Returns
    -------
    bound : float
        A lower bound on ``R*``, at least 0.
    excess : ndarray of shape (n_classes * d,)
        ``|z| - lambda`` (the dual infeasibility of every feature, before any mixing).

    Examples
    --------
    >>> import numpy as np
    >>> U = np.array([[1.0], [1.0], [1.0]])
    >>> masks = np.array([[True, False], [False, True], [True, True]])
    >>> tau, lam = np.array([0.5, 0.5]), np.array([0.1, 0.1])
    >>> bound, excess = dual_lower_bound(U, masks, np.array([0.0, 0.0, 1.0]), tau, lam)
    >>> float(bound), excess.tolist()  # z = 0: D = 1 - 1/2 is a valid bound
    (0.5, [-0.1, -0.1])
    >>> bound, _ = dual_lower_bound(U, masks, np.array([0.2, 0.0, 0.8]), tau, lam)
    >>> round(float(bound), 6)  # |z| = 0.1 = lambda: still feasible
    0.4
    >>> bound, _ = dual_lower_bound(U, masks, np.array([0.4, 0.0, 0.6]), tau, lam)
    >>> round(float(bound), 6)  # |z| = 0.2: half of D(a) = 0.3 remains
    0.15
    """
    w = np.maximum(np.asarray(alpha, dtype=np.float64), 0.0)
    total = w.sum()
    if not total > 0.0:
        return 0.0, np.abs(tau) - lam
    w = w / total
    sizes = masks.sum(axis=1)
    D = float(w @ (1.0 - 1.0 / sizes))
    z = (U.T @ ((masks / sizes[:, None]) * w[:, None])).T.ravel() - tau
    az = np.abs(z)
    excess = az - lam
    over = excess > 0.0
    scaled = over & (lam > 0.0)
    if np.any(over & (lam == 0.0) & (az > zero_tol)):
        return 0.0, excess
    t = float(np.max(1.0 - lam[scaled] / az[scaled])) if scaled.any() else 0.0
    return max((1.0 - t) * D, 0.0), excess


#: a row whose slack has been basic in this many consecutive solves is deleted
_DROP_AFTER = 3


# ------------------------------------------------------------------------ LP building
def _coef(U, masks, feats, d):
    """Dense ``F`` entries of rows with psi-vectors ``U`` (r x d) and subset masks ``masks``
    (r x K) at the features ``feats`` (indices ``y * d + l``): ``[y in C] psi_l / |C|``."""
    sizes = masks.sum(axis=1)
    return (masks / sizes[:, None])[:, feats // d] * U[:, feats % d]


def _row_block(U, masks, active, d):
    """CSR triplets of *primal* LP rows ``F_r (mu1 - mu2) - nu <= b_r`` over the columns
    ``nu, (mu1, mu2) of active[0], (mu1, mu2) of active[1], ...``; returns
    ``(upper, starts, indices, values)``."""
    r = len(U)
    coef = _coef(U, masks, active, d)
    nz_r, nz_p = np.nonzero(coef)
    vals = coef[nz_r, nz_p]
    counts = np.bincount(nz_r, minlength=r)
    row_len = 1 + 2 * counts
    starts = np.zeros(r, dtype=np.int64)
    starts[1:] = np.cumsum(row_len)[:-1]
    idx = np.empty(int(row_len.sum()), dtype=np.int32)
    val = np.empty(len(idx))
    idx[starts] = 0
    val[starts] = -1.0
    offset_in_row = np.arange(len(nz_r)) - np.repeat(np.cumsum(counts) - counts, counts)
    pos = np.repeat(starts, counts) + 1 + 2 * offset_in_row
    idx[pos] = 1 + 2 * nz_p
    val[pos] = vals
    idx[pos + 1] = 2 + 2 * nz_p
    val[pos + 1] = -vals
    return 1.0 / masks.sum(axis=1) - 1.0, starts, idx, val


def _triplets(coef, lead_one: bool):
    """Compressed triplets of the rows of ``coef`` (one compressed vector per row), each
    optionally led by a 1 at index 0 (then the coefficient of column ``p`` goes to ``1 + p``)."""
    nz_r, nz_p = np.nonzero(coef)
    counts = np.bincount(nz_r, minlength=coef.shape[0])
    lens = counts + (1 if lead_one else 0)
    starts = np.zeros(coef.shape[0], dtype=np.int64)
    starts[1:] = np.cumsum(lens)[:-1]
    idx = np.empty(int(lens.sum()), dtype=np.int32)
    val = np.empty(len(idx))
    shift = 0
    if lead_one:
        idx[starts] = 0
        val[starts] = 1.0
        shift = 1
    offset = np.arange(len(nz_r)) - np.repeat(np.cumsum(counts) - counts, counts)
    pos = np.repeat(starts, counts) + shift + offset
    idx[pos] = nz_p + shift
    val[pos] = coef[nz_r, nz_p]
    return starts, idx, val


# --------------------------------------------------------------------------- algorithm
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
    lower_history: list = field(default_factory=list)
    n_constraints: int = 0
    n_lp_rows: int = 0
    n_active_features: int = 0
    lp_solver: str = "highs"
    max_violation: float = 0.0


def mrc_ccg(
    Psi: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    tau: np.ndarray,
    lam: np.ndarray,
    *,
    eps1: float = 1e-4,
    eps2: float = 1e-5,
    n_max: int = 400,
    m_max: int = 400,
    max_iter: int = 500,
    lp_solver: str = "highs",
    tol: float = 1e-6,
    backend: Backend = REFERENCE,
    verbose: int = 0,
) -> CCGResult:
    """Solve the 0-1 MRC LP by constraint (and column) generation over all ``n`` samples.

    The persistent LP is the MRC LP restricted to the generated constraints (its rows) and the
    active features (its columns ``nu, mu1_j, mu2_j``), re-solved from the previous basis by
    the dual simplex: new rows keep that basis dual feasible, and after new feature columns the
    dual simplex repairs their few dual infeasibilities faster than the primal simplex. Rows
    whose slack has stayed basic for ``_DROP_AFTER`` solves are deleted (the current solution
    stays optimal, so the LP value does not drop) whenever the LP value has risen since the
    last deletion, which keeps the LP small without allowing cycles. ``alpha``, the negated row
    duals, prices every feature: it gives :func:`dual_lower_bound` and the features to add.

    Parameters
    ----------
    Psi : ndarray of shape (n_samples, d)
        ``psi(x_i)`` of every training sample (intercept column included, if any).
    y : ndarray of shape (n_samples,)
        Class indices in ``range(n_classes)``; every class must occur.
    n_classes : int
    tau, lam : ndarray of shape (n_classes * d,)
        From :func:`mrc_statistics`.
    eps1, eps2, n_max, m_max, max_iter, lp_solver, tol, verbose
        See :class:`MRCCCG`.
    backend : Backend
        Where the scores and most violated subsets of all samples are computed.

    Returns
    -------
    CCGResult
        ``mu`` is the iterate with the smallest certified ``R(mu)`` (``upper``); ``lower`` is
        the largest :func:`dual_lower_bound` of the iterates, a lower bound on ``R*`` however
        the generation stopped (``lower_history`` holds that bound per iterate).

    Examples
    --------
    >>> import numpy as np
    >>> Psi = np.c_[np.ones(6), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]]
    >>> y = np.array([0, 0, 1, 0, 1, 1])
    >>> tau, lam = mrc_statistics(Psi, y, 2, 0.3)
    >>> res = mrc_ccg(Psi, y, 2, tau, lam, eps1=1e-9, tol=1e-9)
    >>> full = mrc_full_lp(Psi, y, 2, tau, lam, tol=1e-9)
    >>> res.converged, abs(res.upper - full.objective) < 1e-7
    (True, True)
    """
    n, d = Psi.shape
    K = n_classes
    m = K * d
    xp = backend.xp
    Psi_dev = xp.asarray(Psi)
    counts = np.bincount(y, minlength=K)

    # initial features: all, or the m_max with the largest class-mean deviation
    column_generation = m > m_max
    if column_generation:
        mean_psi = Psi.mean(axis=0)
        dev = np.abs(tau - np.outer(counts / n, mean_psi).ravel())
        score = np.where(lam > 0, dev / np.where(lam > 0, lam, 1.0), np.where(dev > 0, np.inf, 0))
        active = np.sort(np.argsort(-score, kind="stable")[:m_max])
    else:
        active = np.arange(m)
    is_active = np.zeros(m, dtype=bool)
    is_active[active] = True

    # z of a coordinate with lambda = 0 is a weighted mean of psi values: in exact arithmetic 0
    # at a dual optimum, in floating point a rounding error far below this
    zero_tol = 1e-12 * max(float(np.abs(Psi).max()), 1e-300)

    lp = make_lp(lp_solver, tol=tol, verbose=verbose)
    # column 0: nu (free); columns 1 + 2p, 2 + 2p: mu1, mu2 of feature active[p]
    lp.add_cols(np.r_[1.0, _costs(tau, lam, active)], np.r_[-np.inf, np.zeros(2 * len(active))],
                np.full(1 + 2 * len(active), np.inf))

    # the LP's rows: psi-vectors, subset masks, (sample, subset) keys, solves with a basic slack
    U_rows = np.zeros((0, d))
    M_rows = np.zeros((0, K), dtype=bool)
    keys: list = []
    age = np.zeros(0, dtype=np.int64)
    seen: set = set()  # keys of the rows in the LP

    def add_constraints(U, masks, new_keys):
        nonlocal U_rows, M_rows, age
        upper, starts, idx, val = _row_block(U, masks, active, d)
        lp.add_rows(np.full(len(U), -np.inf), upper, starts, idx, val)
        U_rows = np.vstack([U_rows, U])
        M_rows = np.vstack([M_rows, masks])
        keys.extend(new_keys)
        age = np.r_[age, np.zeros(len(U), dtype=np.int64)]

    # initial constraints: per class, the average of its singleton rows; implied by the MRC
    # LP, and with the class proportions as alpha the dual is feasible: bounded from the start.
    # They are never deleted (key None).
    onehot = np.zeros((n, K))
    onehot[np.arange(n), y] = 1.0
    add_constraints((Psi.T @ onehot).T / counts[:, None], np.eye(K, dtype=bool), [None] * K)
    n_generated = K

    best = None
    R_hist, L_hist = [], []
    converged = False
    it = 0
    max_viol = np.inf
    lower = 0.0  # R* >= 0: the empirical distribution is a feasible dual point
    drop_level = -np.inf
    for it in range(1, max_iter + 1):
        res = lp.solve("dual")
        if not res.optimal:
            raise RuntimeError(
                f"the restricted MRC LP was not solved to optimality by {lp.name} "
                f"(status: {res.status}) at iteration {it}; try lp_solver='highs' or another "
                "tol"
            )
        mu = np.zeros(m)
        mu[active] = res.x[1::2] - res.x[2::2]
        nu_lp = res.x[0]
        M = xp.asarray(np.ascontiguousarray(mu.reshape(K, d).T))
        V = Psi_dev @ M
        g, size = most_violated(V, backend)
        g_np = backend.asnumpy(g)
        nu = float(g_np.max())
        R = float(-tau @ mu + lam @ np.abs(mu) + nu)
        if best is None or R < best[0]:
            best = (R, mu.copy(), nu)
        R_hist.append(R)

        # constraints: the n_max most violated samples (ties: lowest index), with their subsets
        viol = g_np - nu_lp
        max_viol = float(viol.max())
        cand = np.flatnonzero(viol > eps1)
        cand = cand[np.argsort(-viol[cand], kind="stable")]
        size_np = backend.asnumpy(size)
        MT = mu.reshape(K, d).T
        new_U, new_M, new_keys = [], [], []
        for i in cand:
            if len(new_U) >= n_max:
                break
            mask = np.zeros(K, dtype=bool)
            mask[np.argsort(-(Psi[i] @ MT), kind="stable")[: size_np[i]]] = True
            key = (int(i), mask.tobytes())
            if key in seen:
                continue
            seen.add(key)
            new_U.append(Psi[i])
            new_M.append(mask)
            new_keys.append(key)

        # every feature is priced: a rigorous bound on R* from the row duals, and the features
        # whose dual constraint |F^T alpha - tau| <= lambda is violated by more than eps2
        bound, excess = dual_lower_bound(U_rows, M_rows, -res.row_dual, tau, lam, zero_tol)
        lower = max(lower, bound)
        L_hist.append(bound)
        new_feats = np.empty(0, dtype=np.int64)
        if not is_active.all():
            dv = np.where(is_active, -np.inf, excess)
            cand_f = np.flatnonzero(dv > eps2)
            if not new_U and len(cand_f) == 0 and best[0] - lower > eps1:
                # generation is done, but features violated by less than eps2 keep the bound
                # more than eps1 below R(mu): add every violated one
                cand_f = np.flatnonzero(dv > np.where(lam > 0.0, 0.0, zero_tol))
            new_feats = np.sort(cand_f[np.argsort(-dv[cand_f], kind="stable")][:m_max])

        # delete the rows that have stayed inactive, when the LP value rose since last time
        age = np.where(res.row_basic, age + 1, 0)
        n_deleted = 0
        if new_U and res.objective > drop_level + 1e-12 * max(1.0, abs(res.objective)):
            drop = np.flatnonzero(age >= _DROP_AFTER)
            drop = drop[drop >= K]  # never the class constraints
            if len(drop):
                lp.delete_rows(drop)
                keep = np.ones(len(age), dtype=bool)
                keep[drop] = False
                for j in drop:
                    seen.discard(keys[j])
                keys[:] = [k for k, kept in zip(keys, keep, strict=True) if kept]
                U_rows, M_rows, age = U_rows[keep], M_rows[keep], age[keep]
                drop_level = res.objective
                n_deleted = len(drop)
        if verbose:
            print(
                f"[MRCCCG] iter {it:4d}  LP {res.objective:.8f}  R(mu) {R:.8f}  "
                f"max violation {max_viol:.2e}  simplex iterations {res.iterations}  "
                f"LP rows {lp.n_rows}  features {len(active)}/{m}  +rows {len(new_U)}  "
                f"-rows {n_deleted}  +features {len(new_feats)}"
            )
        if not new_U and len(new_feats) == 0:
            converged = True
            break
        if len(new_feats):
            coef = _coef(U_rows, M_rows, new_feats, d)
            pair = np.empty((len(coef), 2 * len(new_feats)))
            pair[:, 0::2] = coef
            pair[:, 1::2] = -coef
            starts, idx, val = _triplets(pair.T, lead_one=False)
            lp.add_cols(_costs(tau, lam, new_feats), np.zeros(2 * len(new_feats)),
                        np.full(2 * len(new_feats), np.inf), starts, idx, val)
            active = np.concatenate([active, new_feats])
            is_active[new_feats] = True
        if new_U:
            add_constraints(np.asarray(new_U), np.asarray(new_M), new_keys)
            n_generated += len(new_U)

    R, mu, nu = best
    return CCGResult(
        mu=mu, upper=R, nu=nu, lower=float(lower), n_iter=it, converged=converged,
        R_history=R_hist, lower_history=L_hist, n_constraints=n_generated,
        n_lp_rows=lp.n_rows, n_active_features=len(active), lp_solver=lp.name,
        max_violation=max_viol,
    )


def _costs(tau, lam, feats):
    cost = np.empty(2 * len(feats))
    cost[0::2] = -(tau[feats] - lam[feats])
    cost[1::2] = tau[feats] + lam[feats]
    return cost


@dataclass
class FullLPResult:
    """Optimum of the full MRC LP (all samples, all subsets)."""

    objective: float
    mu: np.ndarray
    status: str
    n_rows: int
    seconds: float


def mrc_full_lp(Psi, y, n_classes, tau, lam, *, lp_solver="highs", tol=1e-7, verbose=0,
                time_limit=None) -> FullLPResult:
    """The full 0-1 MRC LP with every row ``(i, C)``, ``n (2^K - 1)`` in all, solved in one go
    (the reference that :func:`mrc_ccg` must match; memory grows as ``n 2^K K d``)."""
    import scipy.sparse as sp

    t0 = time.perf_counter()
    n, d = Psi.shape
    K = n_classes
    m = K * d
    active = np.arange(m)
    blocks, uppers = [], []
    for mask_int in range(1, 2**K):
        mask = np.array([(mask_int >> k) & 1 for k in range(K)], dtype=bool)
        upper, starts, idx, val = _row_block(Psi, np.broadcast_to(mask, (n, K)), active, d)
        indptr = np.r_[starts, len(val)]
        blocks.append(sp.csr_matrix((val, idx, indptr), shape=(n, 1 + 2 * m)))
        uppers.append(upper)
    A = sp.vstack(blocks, format="csr")
    c = np.r_[1.0, _costs(tau, lam, active)]
    lb = np.r_[-np.inf, np.zeros(2 * m)]
    ub = np.full(1 + 2 * m, np.inf)
    upper = np.concatenate(uppers)
    res = solve_lp(c, lb, ub, A, np.full(len(upper), -np.inf), upper, lp_solver=lp_solver, tol=tol,
                   verbose=verbose, time_limit=time_limit)
    mu = res.x[1::2] - res.x[2::2]
    return FullLPResult(res.objective, mu, res.status, A.shape[0], time.perf_counter() - t0)


# --------------------------------------------------------------------------- estimator
class MRCCCG(ClassifierMixin, BaseEstimator):
    """0-1 minimax risk classifier, learned by constraint and column generation.

    The minimax risk classifier (MRC) minimizes the worst-case 0-1 risk over the distributions
    whose feature expectations lie within ``lambda`` of the training mean ``tau`` of
    ``Phi(x, y) = e_y (x) psi(x)``; the minimum ``R*`` is an LP with one row per training
    sample and nonempty label subset. This estimator solves that LP exactly (up to ``eps1``)
    without writing it down: one persistent LP (HiGHS, or Gurobi) receives the most violated
    row of the worst samples (found for *all* samples each iteration, never a subsample) and,
    for many features, the most violated feature columns, and is re-solved warm. At the end,
    the worst-case error ``R(mu)`` of the returned classifier is evaluated exactly over all
    samples and all label subsets and reported as ``upper_``; ``lower_`` is a lower bound on
    the optimum ``R*`` from the LP's duals priced over every feature, so
    ``R* in [lower_, upper_]``.

    Guarantee: ``upper_`` bounds the worst-case expected 0-1 loss of the *randomized* rule
    ``predict_proba`` over the distributions of the uncertainty set that are supported on the
    training inputs (at other inputs the bound does not follow); the empirical distribution is
    one, so the expected training 0-1 error of ``predict_proba`` is at most ``upper_``. The
    deterministic rule ``predict`` (a most probable class) errs only where the true class has
    probability at most 1/2, so its error under those distributions is at most ``2 upper_``;
    ``upper_`` itself is not a bound on it.

    Parameters
    ----------
    phi : {"linear", "fourier", "relu", "threshold"} or transformer, default="linear"
        Feature map ``psi`` (see :mod:`exactclf.mrc._phi`): the inputs; random Fourier
        features (Gaussian kernel); random ReLU features; per-feature threshold indicators;
        or any scikit-learn transformer (a clone is fitted on ``X``).
    s : float, default=0.3
        Width of the uncertainty set: ``lambda = s * std(Phi(x_i, y_i)) / sqrt(n)``.
    fit_intercept : bool, default=True
        Prepend a constant 1 to ``psi(x)``.
    eps1 : float, default=1e-4
        Rows (sample, subset) violated by more than ``eps1`` are added; generation stops when
        none is, and ``upper_ - lower_ <= eps1`` up to the LP solver's tolerance (a
        :class:`~sklearn.exceptions.ConvergenceWarning` says when the gap exceeds
        ``10 (eps1 + tol)``). The CCG paper's 1e-2 stops early with ``upper_`` up to that
        much above ``R*`` (6e-3 on 10000 x 20 ``make_classification``) for little saving in
        time; ``eps1 -> 0`` gives ``R*`` itself.
    eps2 : float, default=1e-5
        Features whose dual constraint is violated by more than ``eps2`` are added. Features
        violated by less still lower ``lower_`` (it prices every feature); when that leaves
        ``upper_ - lower_ > eps1`` at the end, they are added as well.
    n_max : int, default=400
        Rows added per iteration at most.
    m_max : int, default=400
        Column generation is used when there are more than ``m_max`` features
        ``n_classes * len(psi)``: it starts with ``m_max`` of them and adds at most ``m_max``
        per iteration.
    max_iter : int, default=500
        LP solves at most; a :class:`~sklearn.exceptions.ConvergenceWarning` says when this
        stops the generation early (``upper_`` is still certified).
    lp_solver : {"highs", "gurobi"}, default="highs"
        ``"gurobi"`` needs ``pip install exactclf[gurobi]``; when its licence refuses the
        model (the free size-limited one stops at 2000 rows or columns), the fit warns and
        continues with HiGHS.
    tol : float, default=1e-6
        Primal and dual feasibility tolerance of the LP solver.
    n_components : int, default=300
        Random features of ``"fourier"`` / ``"relu"``; most thresholds of ``"threshold"``.
    gamma : {"scale", "auto"} or float, default="scale"
        Scale of the random features: ``w ~ N(0, 2 gamma I)``; ``"scale"`` is
        ``1 / (n_features * X.var())``, ``"auto"`` is ``1 / n_features``.
    device : {"auto", "cpu", "gpu"}, default="auto"
        Where the scores and most violated subsets of all samples are computed each iteration
        (``"gpu"``: CuPy, extra ``exactclf[gpu]``); the LP always runs on the CPU.
    random_state : int, RandomState instance or None, default=None
        Seed of the random features.
    verbose : int, default=0
        ``>= 1`` prints one line per iteration; ``>= 2`` also the LP solver's log.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has feature names that are all strings.
    mu_ : ndarray of shape (n_classes * `n_phi_features_`,)
        MRC parameters, in the layout of ``Phi``: ``mu_[y * n_phi_features_ + l]``.
    nu_ : float
        ``nu(mu_)``, evaluated over all training samples and label subsets.
    tau_, lambda_ : ndarray of shape (n_classes * `n_phi_features_`,)
        Mean and uncertainty width of the features.
    upper_ : float
        ``R(mu_)``, evaluated over all training samples and label subsets: ``R*`` (the minimax
        risk) is at most this, and so is the expected 0-1 loss of the randomized rule
        ``predict_proba`` under every distribution of the uncertainty set supported on the
        training inputs (``predict``: at most twice this).
    lower_ : float
        Lower bound on ``R*``: the best dual bound of the iterates (row duals of the restricted
        LP priced over *every* feature, made feasible by mixing in the empirical distribution;
        see :func:`dual_lower_bound`). Valid however the fit stopped, ``max_iter`` included.
    gap_ : float
        ``upper_ - lower_``.
    n_iter_ : int
        LP solves.
    converged_ : bool
        False when ``max_iter`` stopped the generation.
    R_history_ : list of float
        Certified ``R(mu)`` of every iterate.
    lower_history_ : list of float
        Dual lower bound on ``R*`` of every iterate (``lower_`` is their maximum).
    n_constraints_ : int
        Constraints (sample, label subset) generated, plus one implied constraint per class
        (a constraint deleted as inactive and generated again counts twice).
    n_lp_rows_ : int
        Constraints in the final LP (those not deleted as inactive).
    n_active_features_ : int
        Features in the final LP.
    n_phi_features_ : int
        Length of ``psi(x)``, intercept included.
    lp_solver_ : str
        The solver that produced the final LP solution (after any fallback).
    phi_ : exactclf.mrc._phi.FeatureMap
        The fitted feature map.
    device_ : str
    fit_time_ : float

    See Also
    --------
    sklearn.linear_model.LogisticRegression : a surrogate-loss linear classifier without a
        worst-case guarantee.

    References
    ----------
    S. Mazuelas, A. Zanoni and A. Perez, "Minimax classification with 0-1 loss and performance
    guarantees", NeurIPS 2020. K. Bondugula, S. Mazuelas and A. Perez, "Efficient learning of
    minimax risk classifiers in high dimensions", UAI 2023.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from exactclf.mrc import MRCCCG
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = MRCCCG(eps1=1e-6).fit(X, y)
    >>> bool(clf.lower_ <= clf.upper_ <= clf.lower_ + 1e-6), clf.converged_
    (True, True)
    >>> expected_error = 1 - clf.predict_proba(X)[range(len(y)), y].mean()
    >>> bool(expected_error <= clf.upper_)
    True
    >>> clf.predict(X[:3])
    array([0, 0, 0])
    """

    _parameter_constraints: dict = {
        "phi": [StrOptions(set(PHI_NAMES)), HasMethods(["fit", "transform"])],
        "s": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "eps1": [Interval(Real, 0, None, closed="left")],
        "eps2": [Interval(Real, 0, None, closed="left")],
        "n_max": [Interval(Integral, 1, None, closed="left")],
        "m_max": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "lp_solver": [StrOptions({"highs", "gurobi"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "device": [StrOptions({"auto", "cpu", "gpu"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        phi="linear",
        s=0.3,
        fit_intercept=True,
        eps1=1e-4,
        eps2=1e-5,
        n_max=400,
        m_max=400,
        max_iter=500,
        lp_solver="highs",
        tol=1e-6,
        n_components=300,
        gamma="scale",
        device="auto",
        random_state=None,
        verbose=0,
    ):
        self.phi = phi
        self.s = s
        self.fit_intercept = fit_intercept
        self.eps1 = eps1
        self.eps2 = eps2
        self.n_max = n_max
        self.m_max = m_max
        self.max_iter = max_iter
        self.lp_solver = lp_solver
        self.tol = tol
        self.n_components = n_components
        self.gamma = gamma
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    def _psi(self, X) -> np.ndarray:
        P = self.phi_.transform(X)
        if self.fit_intercept:
            P = np.hstack([np.ones((len(P), 1)), P])
        return P

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the minimax risk classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two or more classes.

        Returns
        -------
        self : MRCCCG
        """
        reset_fitted(self)
        try:
            return self._fit(X, y)
        except BaseException:
            # a fit that fails part-way leaves no half-set attributes behind
            reset_fitted(self)
            raise

    def _fit(self, X, y):
        t0 = time.perf_counter()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        K = len(classes)
        if K < 2:
            raise ValueError(
                f"MRCCCG needs samples of at least 2 classes; the data has only 1 class: "
                f"{classes[0]!r}."
            )
        self.classes_ = classes
        backend = resolve_device(self.device)
        self.device_ = backend.name
        if self.lp_solver == "gurobi":
            from ._lp import _import_gurobipy

            _import_gurobipy()
        self.phi_ = fit_feature_map(self.phi, X, y_idx, n_components=self.n_components,
                                    gamma=self.gamma, random_state=self.random_state)
        Psi = self._psi(X)
        d = Psi.shape[1]
        if d == 0:
            raise ValueError("the feature map produced no features and fit_intercept=False.")
        # exact rescaling of each psi column (R* and the classifier are invariant to it)
        scale = np.abs(Psi).max(axis=0)
        scale[scale == 0] = 1.0
        Psi_s = np.ascontiguousarray(Psi / scale)
        tau_s, lam_s = mrc_statistics(Psi_s, y_idx, K, self.s)
        res = mrc_ccg(
            Psi_s, y_idx, K, tau_s, lam_s, eps1=self.eps1, eps2=self.eps2, n_max=self.n_max,
            m_max=self.m_max, max_iter=self.max_iter, lp_solver=self.lp_solver, tol=self.tol,
            backend=backend, verbose=self.verbose,
        )
        full_scale = np.tile(scale, K)
        self.n_phi_features_ = d
        self.mu_ = res.mu / full_scale
        self.tau_ = tau_s * full_scale
        self.lambda_ = lam_s * full_scale
        self.nu_ = res.nu
        self.upper_ = res.upper
        self.lower_ = res.lower
        self.gap_ = res.upper - res.lower
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        self.R_history_ = res.R_history
        self.lower_history_ = res.lower_history
        self.n_constraints_ = res.n_constraints
        self.n_lp_rows_ = res.n_lp_rows
        self.n_active_features_ = res.n_active_features
        self.lp_solver_ = res.lp_solver
        self.fit_time_ = time.perf_counter() - t0
        if not res.converged:
            warnings.warn(
                f"MRCCCG stopped after max_iter={self.max_iter} LP solves with rows still "
                f"violated by up to {res.max_violation:.3g} (> eps1={self.eps1}); upper_="
                f"{self.upper_:.6g} is certified for the returned classifier, but the minimax "
                "risk may be lower. Increase max_iter or n_max.",
                ConvergenceWarning,
                stacklevel=2,
            )
        elif self.gap_ > 10.0 * (self.eps1 + self.tol):
            # the LP solution meets its dual constraints only to the solver's tolerance, and
            # the rigorous bound pays for every violation (all of it where lambda_j = 0)
            warnings.warn(
                f"MRCCCG converged, but lower_={self.lower_:.6g} is {self.gap_:.3g} below "
                f"upper_={self.upper_:.6g}, far more than eps1={self.eps1}: the LP solution "
                f"meets its dual constraints only to the solver's tolerance tol={self.tol}, "
                "and the certified lower bound pays for that. Both bounds hold; decrease tol "
                "for a tighter lower_.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        K = len(self.classes_)
        return self._psi(X) @ self.mu_.reshape(K, self.n_phi_features_).T

    def decision_function(self, X):
        """Scores ``Phi(x, y)^T mu_``; for two classes, that of ``classes_[1]`` minus that of
        ``classes_[0]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        V = self._scores(X)
        return V[:, 1] - V[:, 0] if V.shape[1] == 2 else V

    def predict_proba(self, X):
        """The MRC's randomized rule ``h(y|x) = (Phi(x, y)^T mu_ - nu_ + 1)_+ / c_x``.

        ``c_x`` normalizes the row; rows where every term is 0 are uniform. On the training
        inputs ``c_x <= 1``, which is what makes ``upper_`` bound this rule's expected error.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        V = self._scores(X)
        H = np.maximum(V - self.nu_ + 1.0, 0.0)
        c = H.sum(axis=1, keepdims=True)
        K = V.shape[1]
        return np.where(c > 0, H / np.where(c > 0, c, 1.0), 1.0 / K)

    def predict(self, X):
        """The deterministic rule: the class of the highest score ``Phi(x, y)^T mu_`` (also a
        most probable class of ``predict_proba``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self._scores(X), axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.phi in ("fourier", "relu") and self.random_state is None
        return tags

