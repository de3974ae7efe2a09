"""An interior point method for the 0-1 MRC LP over whole samples (every label subset at once).

A sample's ``2^K - 1`` subset rows of the MRC LP (:mod:`._ccg`) hold exactly when

    sum_y (v_iy - nu + 1)_+ <= 1,        v_iy = Phi(x_i, y)^T mu,

(the worst subset takes every positive term), that is when some ``w_i >= 0`` has
``w_iy >= v_iy - nu + 1`` for every ``y`` and ``sum_y w_iy <= 1``: ``K`` rows and one row per
sample instead of ``2^K - 1``. The restricted LP here holds these rows for a set of samples
(``Psi``, ``s x d``) and the class-average rows (``centroids``, ``K x d``: the singleton rows
of a class averaged, right-hand side 0), all features active, one-hot ``Phi``::

    min  nu + c1^T x1 + c2^T x2
    s.t. psi_i^T (x1_y - x2_y) - nu - w_iy + s_iy = -1     (sample i, class y)
         c_y^T (x1_y - x2_y) - nu + s_y = 0                (class row y)
         sum_y w_iy + sigma_i = 1                          (sample i)
         0 <= x1 <= u1,  0 <= x2 <= u2,  w, s, sigma >= 0,

``x1_y`` the ``d`` features of class ``y`` (arrays of shape ``(K, d)``). Its dual weighs the
rows by ``y_iy``, ``y_y`` and ``pi_i``; ``pi_i >= max_y y_iy``, and the dual value is ``sum_i
(sum_y y_iy - pi_i)``: the sample's weights form a label distribution whose 0-1 value is
``1 - max`` (:func:`~._bounds.mixture_lower_bound` prices them over every feature).

The normal equations of Mehrotra's method (as in :mod:`._ipm`, bound duals and slacks
eliminated) are over the rows; ordered by class, the rows of class ``y`` (its ``s`` sample rows
and its class row) couple only through ``Phi_y Theta_y Phi_y^T`` (rank ``d``), and the
per-sample rows only through the ``w`` columns. So each class block, a diagonal plus a rank-``d``
term, is inverted by the Sherman-Morrison-Woodbury formula (a ``d x d`` factor per class), and
the per-sample rows' Schur complement, a diagonal plus ``sum_y G_y G_y^T`` (``s x d`` each), is
formed by one ``syrk`` of an ``s x K d`` matrix and factored: ``s^2 K d + s^3 / 3`` per
iteration where the subset rows of the same samples cost ``r^2 K d + r^3 / 3`` for ``r``
rows, several per sample.

A solve may start from the iterate that the previous one kept (:class:`CompactStart`, the
first with a merit below :data:`~._ipm._WARM_AT`, as :mod:`._ipm` does), its new samples given
``w``, slacks and duals that keep it interior. The generation's later LPs add a few samples
to the last one and move its optimum little, so that the solve skips the iterations that
centre a cold start (a point kept later, nearer the boundary, can save more on some LPs and
lose it all on others; benchmarks/results/mrc_multiclass.txt).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.linalg.blas import dgemm, dsyrk
from scipy.linalg.lapack import dpotrf, dtrtri

from ._ipm import (
    _ACCEPT,
    _STALL,
    _WARM_AT,
    IPMResult,
    KeptColumns,
    _Best,
    _columns_inside,
    _predictor_corrector,
    _scaled_cholesky,
    _solver,
)
from ._ipm import _Point as _IPMPoint

__all__ = ["CompactResult", "CompactStart", "compact_mrc_ipm"]

#: refinement steps of each solve of the normal equations: the Woodbury formula loses
#: digits where rows near their bounds make its diagonal tiny, and a single step lets the
#: primal residual grow by orders of magnitude in the last iterations; three hold it down
_REFINE = 3
#: smallest diagonal entry of a class block in the factors, relative to the largest: without
#: a floor the residuals can blow up just before convergence, and the convergence does not
#: depend on its value over a wide range
_FLOOR = 1e-12
#: a kept iterate (:class:`CompactStart`) that new samples violate by more than this (the
#: merit at which it was kept) is no longer warm: the solve starts cold, which then takes
#: fewer iterations than the kept iterate would
_WARM_VIOLATION = _WARM_AT
#: the products of every pair of ``psi``'s columns (``s x d (d + 1) / 2``) are kept where they
#: have at most this many entries (32 MiB): the class blocks' ``d x d`` Gram matrices are then
#: one product with them instead of ``K`` products with ``Psi``
_PAIRS_MAX_ENTRIES = 2**22


@dataclass
class CompactStart(KeptColumns):
    """An interior iterate of :func:`compact_mrc_ipm` to start the next solve from: the
    columns (:class:`~._ipm.KeptColumns`, ``(K, d)`` each, in their own units, not the
    solve's scaled ones), the per-sample fields ``w, zw`` (``(K, s)``), ``pi, sig``
    (``(s,)``), the rows' ``y, s`` (``(K, s + 1)``, the class rows last) and the mean
    complementary product ``mu``."""

    w: np.ndarray
    zw: np.ndarray
    pi: np.ndarray
    sig: np.ndarray
    y: np.ndarray
    s: np.ndarray
    mu: float

    def samples_for(self, old: np.ndarray) -> CompactStart:
        """The same point for an LP whose sample ``i`` was sample ``old[i]`` of this one
        (-1: a new sample, whose fields become NaN: :func:`compact_mrc_ipm` sets them)."""
        known = old >= 0

        def pick(a):
            out = np.full(a.shape[:-1] + (len(old),), np.nan)
            out[..., known] = a[..., old[known]]
            return out

        y = np.c_[pick(self.y[:, :-1]), self.y[:, -1:]]
        s = np.c_[pick(self.s[:, :-1]), self.s[:, -1:]]
        return CompactStart(self.x1, self.x2, self.z1, self.z2, self.v1, self.v2, self.nu,
                            pick(self.w), pick(self.zw), pick(self.pi), pick(self.sig), y, s,
                            self.mu)


@dataclass
class CompactResult(IPMResult):
    """Solution of :func:`compact_mrc_ipm`, as :class:`~._ipm.IPMResult` (``warm`` None)
    with ``x1, x2, d1, d2`` of shape ``(K, d)``, the row duals ``y`` and slacks ``s`` of
    shape ``(K, s + 1)`` (sample rows, then the class row), ``w`` (``K x s``), the per-sample
    rows' duals ``pi``, the merit (largest relative residual or gap) of the solution,
    ``start``, the iterate to start the next solve from (None where no iterate reached
    :data:`~._ipm._WARM_AT`), and whether this solve started from one (``started_warm``)."""

    w: np.ndarray | None = None
    pi: np.ndarray | None = None
    merit: float = np.inf
    start: CompactStart | None = None
    started_warm: bool = False


class _Rows:
    """Products with the row matrix: ``F u`` (``u`` of shape ``(K, d)``) gives the scores of
    every row, ``(K, s + 1)``; ``F^T v`` the reverse."""

    def __init__(self, Psi, centroids):
        self.Psi, self.C = Psi, centroids
        self.s, d = Psi.shape
        self._upper = np.triu_indices(d)
        self._pairs = None
        if self.s * len(self._upper[0]) <= _PAIRS_MAX_ENTRIES:
            self._pairs = Psi[:, self._upper[0]] * Psi[:, self._upper[1]]

    def dot(self, u):
        out = np.empty((u.shape[0], self.s + 1))
        out[:, :-1] = u @ self.Psi.T
        out[:, -1] = np.einsum("kd,kd->k", self.C, u)
        return out

    def tdot(self, v):
        return v[:, :-1] @ self.Psi + self.C * v[:, -1:]

    def grams(self, weights):
        """``Psi^T diag(weights[y]) Psi`` for every row ``y`` of ``weights`` (``K x s``,
        nonnegative): one product with the pairwise products of ``psi``'s columns where they
        are kept, a ``syrk`` per class otherwise."""
        d = self.Psi.shape[1]
        out = np.empty((len(weights), d, d))
        i, j = self._upper
        if self._pairs is None:
            for k, w in enumerate(weights):  # (syrk fills the upper triangle)
                out[k] = dsyrk(1.0, self.Psi * np.sqrt(w)[:, None], trans=1)
        else:
            out[:, i, j] = dgemm(1.0, weights, self._pairs)
        out[:, j, i] = out[:, i, j]
        return out


class _Point(_IPMPoint):
    """:class:`~._ipm._Point` with the pairs of the per-sample rows ``(pi, sig)`` and of the
    ``w`` columns ``(zw, w)``."""

    PAIRS = (("y", "s"), ("pi", "sig"), ("z1", "x1"), ("z2", "x2"), ("v1", "w1"),
             ("v2", "w2"), ("zw", "w"))


def _inverse_factors(cap):
    """``L^-1`` (lower) of the Cholesky factors ``L L^T`` of the ``K`` matrices ``cap``
    (``I`` plus a PSD term), by LAPACK's triangular inverse (a third of a general inverse's
    work). Where rows far from their bounds make the PSD term huge, its rounding errors can
    outweigh the ``I``: such a matrix is factored as :func:`~._ipm._scaled_cholesky` does
    (scaled to a unit diagonal, shifted until the factor exists)."""
    out = np.empty_like(cap)
    for k, A in enumerate(cap):
        factor, info = dpotrf(A, lower=1, clean=1)
        scale = None
        if info != 0:
            (factor, _), scale = _scaled_cholesky(A)
            factor = np.tril(factor)
        out[k], info = dtrtri(factor, lower=1)
        if info != 0:
            raise np.linalg.LinAlgError("a class block's factor is singular")
        if scale is not None:
            out[k] *= scale[None, :]
    return out


def _newton(F: _Rows, p: _Point, r_nu, r1, r2, rw, rp, rsig):
    """The Newton directions at ``p`` as a function of the complementarity right-hand sides
    (module docstring: per-class Woodbury, then the per-sample rows' Schur complement)."""
    K, s1 = p.y.shape
    s = s1 - 1
    D1 = p.z1 / p.x1 + np.where(p.f1, p.v1 / p.w1, 0.0)
    D2 = p.z2 / p.x2 + np.where(p.f2, p.v2 / p.w2, 0.0)
    theta = 1.0 / D1 + 1.0 / D2
    tw = p.w / p.zw
    s_y = p.s / p.y
    delta = s_y.copy()
    delta[:, :s] += tw
    # (the factors take the diagonal at least _FLOOR of its largest entry: where a row is
    # tight with its w_iy at 0, its entry tends to 0, Woodbury's inverse to infinity; the
    # refinement against the exact products corrects the direction)
    inv = 1.0 / np.maximum(delta, _FLOOR * delta.max())
    # per class: (diag(delta) + Q Q^T)^-1, Q = Phi_y diag(sqrt(theta_y)), by its d x d
    # capacitance C = I + Q^T diag(1/delta) Q (>= I: well conditioned)
    rt = np.sqrt(theta)
    cap = F.grams(inv[:, :s])
    cap += (F.C * inv[:, s:])[:, :, None] * F.C[:, None, :]
    cap *= rt[:, :, None] * rt[:, None, :]
    cap[:, np.arange(cap.shape[1]), np.arange(cap.shape[1])] += 1.0
    Linv = _inverse_factors(cap)
    LinvT = np.ascontiguousarray(Linv.transpose(0, 2, 1))

    def block_solve(h):
        t = h * inv
        u = rt * F.tdot(t)
        u = (LinvT @ (Linv @ u[:, :, None]))[:, :, 0]
        return t - inv * F.dot(rt * u)

    # Schur complement of the class blocks on the per-sample rows
    # (G_y = diag(tw_y inv_y) Psi diag(rt_y) L_y^-T, side by side: one product with Psi)
    d = Linv.shape[1]
    G = dgemm(1.0, F.Psi, (rt[:, :, None] * LinvT).transpose(1, 0, 2).reshape(d, K * d))
    G.reshape((s, d, K), order="F")[...] *= (tw * inv[:, :s]).T[:, None, :]
    S = dsyrk(1.0, G, lower=1)
    S[np.diag_indices_from(S)] += p.sig / p.pi + (tw * s_y[:, :s] * inv[:, :s]).sum(axis=0)
    schur = _solver(S)

    def solve(hY, hS):
        t = block_solve(hY)
        vS = schur(hS + (tw * t[:, :s]).sum(axis=0))
        h2 = hY.copy()
        h2[:, :s] += tw * vS
        return block_solve(h2), vS

    def matvec(vY, vS):
        out = F.dot(theta * F.tdot(vY)) + s_y * vY
        out[:, :s] += tw * (vY[:, :s] - vS)
        return out, (tw * (vS - vY[:, :s])).sum(axis=0) + p.sig / p.pi * vS

    ones_Y, zeros_S = np.ones_like(p.y), np.zeros(s)
    e_sol = solve(ones_Y, zeros_S)
    e_sum = e_sol[0].sum()

    def bordered(hY, hS, h_nu):
        # (M dy + dnu e = h, e^T dy = h_nu), e: 1 on the rows with nu
        dY, dS, dnu = np.zeros_like(hY), np.zeros_like(hS), 0.0
        for _ in range(1 + _REFINE):
            aY, aS = solve(hY, hS)
            step_nu = (aY.sum() - h_nu) / e_sum
            aY, aS = aY - step_nu * e_sol[0], aS - step_nu * e_sol[1]
            dY, dS, dnu = dY + aY, dS + aS, dnu + step_nu
            mY, mS = matvec(aY, aS)
            hY, hS = hY - mY - step_nu, hS - mS
            h_nu = h_nu - aY.sum()
        return dY, dS, dnu

    def direction(c_y, c_pi, c_z1, c_z2, c_v1, c_v2, c_zw):
        g1 = -r1 + c_z1 / p.x1 - np.where(p.f1, c_v1 / p.w1, 0.0)
        g2 = -r2 + c_z2 / p.x2 - np.where(p.f2, c_v2 / p.w2, 0.0)
        gw = -rw + c_zw / p.w
        hY = rp + F.dot(g1 / D1 - g2 / D2) + c_y / p.y
        hY[:, :s] -= tw * gw
        hS = rsig + (tw * gw).sum(axis=0) + c_pi / p.pi
        dy, dpi, dnu = bordered(hY, hS, r_nu)
        Ftdy = F.tdot(dy)
        dx1 = (g1 - Ftdy) / D1
        dx2 = (g2 + Ftdy) / D2
        dw = tw * (gw + dy[:, :s] - dpi)
        return {"x1": dx1, "x2": dx2, "nu": dnu, "w": dw, "y": dy, "pi": dpi,
                "s": (c_y - p.s * dy) / p.y, "sig": (c_pi - p.sig * dpi) / p.pi,
                "z1": (c_z1 - p.z1 * dx1) / p.x1, "z2": (c_z2 - p.z2 * dx2) / p.x2,
                "v1": np.where(p.f1, (c_v1 + p.v1 * dx1) / p.w1, 0.0),
                "v2": np.where(p.f2, (c_v2 + p.v2 * dx2) / p.w2, 0.0),
                "zw": (c_zw - p.zw * dw) / p.w, "w1": -dx1, "w2": -dx2}

    return direction


def _warm_point(F: _Rows, U1, U2, f1, f2, start: CompactStart, unit) -> _Point:
    """``start`` (columns in their own units) made interior for this LP: the columns as
    :func:`~._ipm._columns_inside` moves them; a new sample (NaN) gets ``w_iy = (v_iy - nu +
    1)_+ + sqrt(mu)`` (so that its rows' slacks are at least ``sqrt(mu)``), ``sig = max(1 -
    sum_y w_iy, sqrt(mu))`` and the duals ``mu / slack``; the residuals this leaves (``sig``
    of a sample violated there) are the infeasible method's to remove. Returns the point and
    the new samples' largest violation ``sum_y (v_iy - nu + 1)_+ - 1`` there."""
    gap = np.sqrt(start.mu)
    x1, x2, w1, w2, v1, v2 = _columns_inside(start.x1 * unit, start.x2 * unit,
                                             start.v1 / unit, start.v2 / unit, U1, U2, f1, f2,
                                             start.mu)
    new = np.isnan(start.pi)
    rows = np.r_[new, False]  # (the class rows are kept)
    w, zw, pi, sig = start.w.copy(), start.zw.copy(), start.pi.copy(), start.sig.copy()
    y, s = start.y.copy(), start.s.copy()
    violation = -np.inf
    if new.any():
        lhs = (x1 - x2) @ F.Psi[new].T - start.nu
        excess = np.maximum(lhs + 1.0, 0.0)
        violation = float(excess.sum(axis=0).max()) - 1.0
        w[:, new] = excess + gap
        s[:, rows] = w[:, new] - 1.0 - lhs
        sig[new] = np.maximum(1.0 - w[:, new].sum(axis=0), gap)
        y[:, rows] = start.mu / s[:, rows]
        zw[:, new] = start.mu / w[:, new]
        pi[new] = start.mu / sig[new]
    return _Point(x1=x1, x2=x2, w1=w1, w2=w2, w=w, s=s, sig=sig, nu=start.nu, y=y, pi=pi,
                  z1=start.z1 / unit, z2=start.z2 / unit, v1=v1, v2=v2, zw=zw, f1=f1,
                  f2=f2), violation


def compact_mrc_ipm(Psi, centroids, c1, c2, u1, u2, *, tol: float = 1e-8,
                    max_iter: int = 100, time_limit: float | None = None,
                    start: CompactStart | None = None) -> CompactResult:
    """Solve the LP of the module docstring by Mehrotra's predictor-corrector method.

    Parameters
    ----------
    Psi : ndarray of shape (s, d)
        ``psi(x_i)`` of the samples whose every subset row the LP holds.
    centroids : ndarray of shape (K, d)
        The class-average rows' ``psi`` (row ``y``: class ``y``'s).
    c1, c2 : ndarray of shape (K, d)
        Costs of ``x1`` and ``x2`` (``nu`` costs 1).
    u1, u2 : ndarray of shape (K, d)
        Upper bounds (``inf``: none).
    tol : float
        Relative primal and dual infeasibility and duality gap at which it stops (or after a
        few iterations without progress, with the best iterate, converged if within 1e-6).
    max_iter : int
    time_limit : float or None
        Seconds; the best iterate so far is returned with ``time_limit_reached``.
    start : CompactStart or None
        An iterate of a previous solve (``CompactResult.start``, its samples re-indexed to
        these by :meth:`CompactStart.samples_for`); ``K`` and ``d`` must be the same. None: a
        cold start.

    Returns
    -------
    CompactResult

    Examples
    --------
    One feature (the intercept), two classes, two samples: every rule scores the classes
    alike on both, and the best is the uniform one, ``R* = 1/2``.

    >>> import numpy as np
    >>> Psi, C = np.ones((2, 1)), np.ones((2, 1))
    >>> tau, lam = np.full((2, 1), 0.5), np.zeros((2, 1))
    >>> res = compact_mrc_ipm(Psi, C, -(tau - lam), tau + lam, np.full((2, 1), np.inf),
    ...                       np.full((2, 1), np.inf))
    >>> res.converged, round(res.objective, 6)
    (True, 0.5)
    """
    t0 = time.perf_counter()
    # every psi column scaled to a largest |entry| of 1 (x by the inverse): columns whose
    # scales differ by orders of magnitude can stall the method at a large residual
    unit = np.abs(np.vstack([Psi, centroids])).max(axis=0)
    unit = np.where(unit > 0.0, unit, 1.0)
    Psi = np.ascontiguousarray(Psi / unit, dtype=np.float64)
    C = np.ascontiguousarray(centroids / unit, dtype=np.float64)
    F = _Rows(Psi, C)
    s = Psi.shape[0]
    K = C.shape[0]
    c1, c2 = np.asarray(c1, np.float64) / unit, np.asarray(c2, np.float64) / unit
    u1, u2 = np.asarray(u1, np.float64) * unit, np.asarray(u2, np.float64) * unit
    f1, f2 = np.isfinite(u1), np.isfinite(u2)
    U1, U2 = np.where(f1, u1, 0.0), np.where(f2, u2, 0.0)
    b = np.zeros((K, s + 1))
    b[:, :s] = -1.0

    scale = 1.0 + max(float(np.abs(c1).max(initial=0.0)), float(np.abs(c2).max(initial=0.0)))
    n_rows = K * (s + 1)
    if start is not None:
        p, violation = _warm_point(F, U1, U2, f1, f2, start, unit)
        if violation > _WARM_VIOLATION:
            start = None
    if start is None:
        x1, x2 = np.where(f1, 0.5 * U1, 1.0), np.where(f2, 0.5 * U2, 1.0)
        w = np.full((K, s), 0.5 / K)
        lhs = F.dot(x1 - x2)
        lhs[:, :s] -= w
        nu = float(np.max(lhs - b)) + 1.0
        p = _Point(x1=x1, x2=x2, w1=np.where(f1, U1 - x1, 1.0), w2=np.where(f2, U2 - x2, 1.0),
                   w=w, s=b - lhs + nu, sig=np.full(s, 0.5), nu=nu,
                   y=np.full((K, s + 1), 1.0 / n_rows), pi=np.full(s, 2.0 / n_rows),
                   z1=np.full_like(x1, scale), z2=np.full_like(x2, scale),
                   v1=np.where(f1, scale, 0.0), v2=np.where(f2, scale, 0.0),
                   zw=np.full((K, s), 1.0 / n_rows), f1=f1, f2=f2)

    n_comp = n_rows + s + 2 * p.x1.size + int(f1.sum()) + int(f2.sum()) + K * s
    timed_out = False
    best, n_iter = _Best(p), 0
    kept = None
    while n_iter < max_iter:
        n_iter += 1
        Fty = F.tdot(p.y)
        r_nu = 1.0 - p.y.sum()
        r1 = c1 + Fty - p.z1 + p.v1
        r2 = c2 - Fty - p.z2 + p.v2
        rw = p.pi[None, :] - p.y[:, :s] - p.zw
        rp = F.dot(p.x1 - p.x2) - p.nu + p.s - b
        rp[:, :s] -= p.w
        rsig = p.w.sum(axis=0) + p.sig - 1.0
        p_obj = p.nu + float((c1 * p.x1).sum() + (c2 * p.x2).sum())
        d_obj = float(p.y[:, :s].sum() - p.pi.sum() - (U1 * p.v1).sum() - (U2 * p.v2).sum())
        merit = max(max(float(np.abs(rp).max()), float(np.abs(rsig).max(initial=0.0))) / 2.0,
                    max(abs(r_nu), float(np.abs(r1).max()), float(np.abs(r2).max()),
                        float(np.abs(rw).max(initial=0.0))) / scale,
                    abs(p_obj - d_obj) / (1.0 + abs(p_obj)))
        best.update(merit, p)
        products = p.products()
        mu = sum(float(q.sum()) for q in products) / n_comp
        if kept is None and merit <= _WARM_AT:
            kept = CompactStart(p.x1 / unit, p.x2 / unit, p.z1 * unit, p.z2 * unit,
                                p.v1 * unit, p.v2 * unit, p.nu, p.w, p.zw, p.pi, p.sig, p.y,
                                p.s, mu)
        if merit <= tol or best.stalled >= _STALL:
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            timed_out = True
            break

        p = _predictor_corrector(p, _newton(F, p, r_nu, r1, r2, rw, rp, rsig), products, mu,
                                 n_comp)

    p = best.point
    objective = p.nu + float((c1 * p.x1).sum() + (c2 * p.x2).sum())
    x1 = np.where(f1 & (p.v1 > p.w1), U1, p.x1) / unit
    x2 = np.where(f2 & (p.v2 > p.w2), U2, p.x2) / unit
    return CompactResult(x1, x2, float(p.nu), p.y, p.s, (p.z1 - p.v1) * unit,
                         (p.z2 - p.v2) * unit, float(objective), n_iter,
                         bool(best.merit <= _ACCEPT), timed_out, time.perf_counter() - t0,
                         w=p.w, pi=p.pi, merit=float(best.merit), start=kept,
                         started_warm=start is not None)
