"""A dense primal-dual interior point method for the restricted 0-1 MRC LP.

The restricted LP of :mod:`._ccg` with many classes is small in rows (about a thousand) but
dense and wide (half of its ``2 K d + 1`` columns hit a row), which sparse LP codes handle
poorly (HiGHS' IPX: benchmarks/results/mrc_multiclass.txt). Its
columns come in pairs ``mu1 - mu2``, so the normal equations of an interior point method are
the rows' Gram matrix ``F Theta F^T`` with one diagonal ``Theta`` for both halves of a pair:
half the work of the generic ``A Theta A^T``, done by one BLAS ``syrk`` and a dense Cholesky.

The LP (rows ``F``, ``r x n``; ``u1``, ``u2`` upper bounds, possibly infinite)::

    min  nu + c1^T x1 + c2^T x2
    s.t. F (x1 - x2) - nu + s = b,   s >= 0,   0 <= x1 <= u1,   0 <= x2 <= u2,

with row duals ``y >= 0`` (``1^T y = 1`` from the free ``nu``) and bound duals ``z1, z2``
(lower) and ``v1, v2`` (upper). Mehrotra's predictor-corrector step: eliminating the bound
duals and the slacks leaves, with ``Theta = 1 / D1 + 1 / D2`` (``D = z / x + v / (u - x)``)::

    (F Theta F^T + S / Y) dy + dnu 1 = h,    1^T dy = 1 - 1^T y,

solved by one Cholesky factor (of ``M`` scaled to a unit diagonal) and triangular solves,
refined once against products with ``F``. The solution is not a vertex: columns whose
upper bound's dual exceeds their distance to it are put on it (where the generation's box
looks for a binding bound), and a row with a slack larger than its dual counts as inactive
(the basic slack that the generation's row deletion looks for). Nothing certified depends on
the accuracy here: :mod:`._ccg` evaluates ``R(mu)`` of the returned ``mu`` exactly and
prices the row duals over every feature.

The generation solves a sequence of such LPs, each with a few hundred rows more than the last
(and some deleted). A solve may start from an iterate that the previous one kept
(:class:`WarmStart`, the first with a merit below :data:`_WARM_AT`: still well centred), its
new rows given slacks and duals that keep it interior; the infeasible method removes the
residuals this leaves, in clearly fewer iterations than a cold start. An iterate kept later
(a smaller merit) lies closer to the boundary and saves less
(benchmarks/results/mrc_multiclass.txt).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.linalg.blas import dgemv, dsyrk
from threadpoolctl import ThreadpoolController

__all__ = ["IPMResult", "WarmStart", "dense_mrc_ipm", "warm_or_cold"]

#: fraction of the step to the boundary
_STEP = 0.995
#: iterations without a better merit (the largest relative residual or gap) after which the
#: best iterate is returned, and the merit at which it counts as converged
_STALL, _ACCEPT = 5, 1e-6
#: refinement steps of each solve of the normal equations
_REFINE = 1
#: the iterate kept for a warm start (:class:`WarmStart`) is the first with a merit at most
#: this: still well inside the feasible region, where the next LP's new rows move it least
_WARM_AT = 1e-2


@dataclass
class KeptColumns:
    """The columns of an interior iterate kept to start a later solve from: ``x1, x2``,
    their bound duals ``z1, z2, v1, v2`` and ``nu``."""

    x1: np.ndarray
    x2: np.ndarray
    z1: np.ndarray
    z2: np.ndarray
    v1: np.ndarray
    v2: np.ndarray
    nu: float


@dataclass
class WarmStart(KeptColumns):
    """An interior iterate of :func:`dense_mrc_ipm` to start the next solve from: the
    columns (:class:`KeptColumns`), the rows' ``y, s`` and the average complementary product
    ``mu``. Before it is passed on, its rows are re-indexed to the new LP's
    (:meth:`rows_for`)."""

    y: np.ndarray
    s: np.ndarray
    mu: float

    def rows_for(self, old: np.ndarray) -> WarmStart:
        """The same point for an LP whose row ``i`` was row ``old[i]`` of this one (-1: a new
        row, whose ``y, s`` become NaN: :func:`dense_mrc_ipm` sets them)."""
        known = old >= 0
        y, s = np.full(len(old), np.nan), np.full(len(old), np.nan)
        y[known], s[known] = self.y[old[known]], self.s[old[known]]
        return WarmStart(self.x1, self.x2, self.z1, self.z2, self.v1, self.v2, self.nu, y, s,
                         self.mu)


@dataclass
class IPMResult:
    """Solution of :func:`dense_mrc_ipm`: ``x1, x2, nu, y`` (row duals, ``>= 0``), ``s``
    (row slacks), ``d1, d2`` (reduced costs ``z - v`` of ``x1, x2``), the primal objective,
    the iterations, whether it converged, the seconds it took; ``warm`` the iterate to start
    the next solve from (None where no iterate reached :data:`_WARM_AT`)."""

    x1: np.ndarray
    x2: np.ndarray
    nu: float
    y: np.ndarray
    s: np.ndarray
    d1: np.ndarray
    d2: np.ndarray
    objective: float
    iterations: int
    converged: bool
    time_limit_reached: bool
    seconds: float
    warm: WarmStart | None = None


def warm_or_cold(solve, start, time_limit: float | None):
    """``solve(start=start, time_limit=time_limit)`` (either IPM of this package), and where a
    warm start stalls short of convergence, the same LP again from the cold start with the
    time left: a start far from the new LP's central path can leave the iterates where
    rounding stops them, and whether it does depends on the BLAS kernels of the machine.

    Examples
    --------
    >>> import numpy as np
    >>> F, b = np.array([[1.0], [-1.0]]), np.array([0.0, -1.0])
    >>> c, u = np.array([0.5]), np.array([np.inf])
    >>> def solve(start, time_limit):
    ...     return dense_mrc_ipm(F, b, c, c, u, u, start=start, time_limit=time_limit)
    >>> round(warm_or_cold(solve, solve(None, None).warm, None).objective, 6)
    0.75
    """
    res = solve(start=start, time_limit=time_limit)
    if start is None or res.converged or res.time_limit_reached:
        return res
    left = None if time_limit is None else time_limit - res.seconds
    return solve(start=None, time_limit=left)


def _max_step(v, dv):
    """The largest ``a <= 1`` with ``v + a dv >= 0`` (``v > 0``)."""
    neg = dv < 0.0
    if not neg.any():
        return 1.0
    return float(min(1.0, np.min(-v[neg] / dv[neg])))


def _dot(F, v, transpose: bool = False):
    """``F @ v`` (``F.T @ v`` with ``transpose``) by scipy's BLAS, the library of the normal
    matrix's ``syrk`` and of its Cholesky factor: numpy may carry its own copy of OpenBLAS, and
    switching between the two, each with its threads spinning after a call, costs more than
    the products (``benchmarks/results/mrc_multiclass.txt``)."""
    return dgemv(1.0, F.T, v, trans=0 if transpose else 1)


def numpy_blas_serial():
    """A context (:meth:`threadpoolctl.ThreadpoolController.limit`) in which numpy's BLAS runs
    on one thread and scipy's keeps its threads, where the two are separate libraries (as in
    the pip wheels, each with its own OpenBLAS); elsewhere all BLAS runs on one thread.

    The IPMs' large products (a normal matrix's ``syrk`` and its Cholesky factor) are
    scipy's, their many small ones numpy's; with both libraries threaded, each library's
    threads, spinning after a call, slow the other's calls (figures in
    ``benchmarks/results/mrc_multiclass.txt``).
    """
    blas = ThreadpoolController().select(user_api="blas")
    root = os.path.realpath(os.path.dirname(np.__file__))
    own = [lib.filepath for lib in blas.lib_controllers
           if os.path.realpath(lib.filepath).startswith(root)]
    if own and len(own) < len(blas.lib_controllers):
        return blas.select(filepath=own).limit(limits=1)
    return blas.limit(limits=1)


def _scaled_cholesky(M):
    """``(factor, scale)``: the lower Cholesky factor (:func:`scipy.linalg.cho_factor`) of
    the symmetric positive (semi)definite ``M`` (lower triangle filled) scaled to a unit
    diagonal, ``diag(scale) M diag(scale)``, shifted by a multiple of the identity that grows
    until the factor exists: near the end ``M`` is as ill-conditioned as ``Theta`` and
    singular where more rows are active than a vertex holds, and a shift relative to each
    row's own diagonal disturbs the others least."""
    scale = 1.0 / np.sqrt(np.maximum(M.diagonal(), np.finfo(float).tiny))
    Mn = M * scale[:, None]
    Mn *= scale[None, :]
    shift = 0.0
    for _ in range(8):
        Mn[np.diag_indices_from(Mn)] = 1.0 + shift
        try:
            return cho_factor(Mn, lower=True, check_finite=False), scale
        except LinAlgError:
            shift = 1e-14 if shift == 0.0 else 100.0 * shift
    raise LinAlgError("the normal equations stayed singular")


def _solver(M):
    """``h -> M^-1 h`` by :func:`_scaled_cholesky`."""
    factor, scale = _scaled_cholesky(M)
    return lambda h: scale * cho_solve(factor, scale * h, check_finite=False)


class _Point:
    """An interior point: primal ``x1, x2, nu, s`` and the distances ``w1, w2`` to the
    upper bounds (1 where there is none), dual ``y, z1, z2, v1, v2`` (``v`` 0 where there is
    no upper bound); ``f1, f2`` mark the finite upper bounds. ``PAIRS`` names the
    complementary pairs ``(dual, primal)``; the fields of ``UPPER`` exist only where their
    mask is true (a subclass may add pairs: :mod:`._ipm_compact`)."""

    PAIRS = (("y", "s"), ("z1", "x1"), ("z2", "x2"), ("v1", "w1"), ("v2", "w2"))
    UPPER = {"v1": "f1", "w1": "f1", "v2": "f2", "w2": "f2"}

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def _masked(self, name, value):
        return np.where(getattr(self, self.UPPER[name]), value, 0.0) if name in self.UPPER \
            else value

    def products(self):
        """The complementary products (bound pairs without an upper bound count 0)."""
        return tuple(self._masked(dual, getattr(self, dual) * getattr(self, primal))
                     for dual, primal in self.PAIRS)

    def moved(self, d, a_p: float, a_d: float) -> _Point:
        """The point after the steps ``a_p`` (primal) and ``a_d`` (dual) along ``d``."""
        new = type(self)(**self.__dict__)
        new.nu = self.nu + a_p * d["nu"]
        for dual, primal in self.PAIRS:
            setattr(new, primal, getattr(self, primal) + a_p * d[primal])
            setattr(new, dual, getattr(self, dual) + a_d * d[dual])
            if primal in self.UPPER:
                setattr(new, primal, np.where(getattr(self, self.UPPER[primal]),
                                              getattr(new, primal), 1.0))
        return new

    def steps(self, d):
        """The largest primal and dual steps along ``d`` that keep the point interior."""
        def longest(names):
            return min(_max_step(getattr(self, k)[m], d[k][m]) for k, m in (
                (k, getattr(self, self.UPPER[k]) if k in self.UPPER else slice(None))
                for k in names))

        return (longest(primal for _, primal in self.PAIRS),
                longest(dual for dual, _ in self.PAIRS))


class _Best:
    """The iterate of the smallest merit so far, and the iterations since it improved."""

    def __init__(self, p: _Point):
        self.merit, self.point, self.stalled = np.inf, p, 0

    def update(self, merit: float, p: _Point) -> None:
        if merit < self.merit:
            self.merit, self.point, self.stalled = merit, p, 0
        else:
            self.stalled += 1


def _predictor_corrector(p: _Point, direction, products, mu: float, n_comp: int) -> _Point:
    """Mehrotra's step from ``p`` (complementary ``products``, their mean ``mu`` over
    ``n_comp`` pairs): the affine scaling direction, then the centring and second-order
    corrector, ``direction(*rhs)`` giving the Newton direction for the complementarity
    right-hand sides ``rhs`` (one per pair of ``p.PAIRS``; those of absent upper bounds are
    ignored)."""
    aff = direction(*(-q for q in products))
    a_p, a_d = p.steps(aff)
    mu_aff = sum(float(q.sum()) for q in p.moved(aff, a_p, a_d).products()) / n_comp
    sm = min(1.0, (mu_aff / mu) ** 3) * mu
    corr = direction(*(sm - q - aff[z] * aff[x] for q, (z, x) in zip(
        products, p.PAIRS, strict=True)))
    a_p, a_d = p.steps(corr)
    return p.moved(corr, _STEP * a_p, _STEP * a_d)


def _newton(F, p: _Point, r_nu, r1, r2, rp):
    """The Newton directions at ``p`` (residuals ``r_nu, r1, r2, rp``) as a function of
    the right-hand sides of the linearized complementarity rows (module docstring)."""
    D1 = p.z1 / p.x1 + np.where(p.f1, p.v1 / p.w1, 0.0)
    D2 = p.z2 / p.x2 + np.where(p.f2, p.v2 / p.w2, 0.0)
    theta = 1.0 / D1 + 1.0 / D2
    s_y = p.s / p.y
    M = dsyrk(1.0, (F * np.sqrt(theta)).T, trans=1, lower=1)  # (.T: no copy)
    M[np.diag_indices_from(M)] += s_y
    solve = _solver(M)
    ones_sol = solve(np.ones(len(p.y)))

    def bordered(h, h_nu):
        # (M dy + dnu 1 = h, 1^T dy = h_nu) by the factor of M, refined against products
        # with F itself: the factor of a matrix as ill-conditioned as Theta loses digits
        dy, dnu = np.zeros_like(h), 0.0
        for _ in range(1 + _REFINE):
            a = solve(h)
            step_nu = (a.sum() - h_nu) / ones_sol.sum()
            a -= step_nu * ones_sol
            dy, dnu = dy + a, dnu + step_nu
            h = h - (_dot(F, theta * _dot(F, a, True)) + s_y * a + step_nu)
            h_nu = h_nu - a.sum()
        return dy, dnu

    def direction(c_s, c_z1, c_z2, c_v1, c_v2):
        g1 = -r1 + c_z1 / p.x1 - np.where(p.f1, c_v1 / p.w1, 0.0)
        g2 = -r2 + c_z2 / p.x2 - np.where(p.f2, c_v2 / p.w2, 0.0)
        dy, dnu = bordered(rp + _dot(F, g1 / D1 - g2 / D2) + c_s / p.y, r_nu)
        Ftdy = _dot(F, dy, True)
        dx1 = (g1 - Ftdy) / D1
        dx2 = (g2 + Ftdy) / D2
        return {"x1": dx1, "x2": dx2, "nu": dnu, "s": (c_s - p.s * dy) / p.y, "y": dy,
                "z1": (c_z1 - p.z1 * dx1) / p.x1, "z2": (c_z2 - p.z2 * dx2) / p.x2,
                "v1": np.where(p.f1, (c_v1 + p.v1 * dx1) / p.w1, 0.0),
                "v2": np.where(p.f2, (c_v2 + p.v2 * dx2) / p.w2, 0.0),
                "w1": -dx1, "w2": -dx2}

    return direction


def _cold_point(F, b, U1, U2, f1, f2, scale: float) -> _Point:
    """Bounded columns in the middle of their range, the others at 1; ``nu`` so that every
    slack is at least 1; duals of the scale of the costs."""
    x1, x2 = np.where(f1, 0.5 * U1, 1.0), np.where(f2, 0.5 * U2, 1.0)
    Fx = _dot(F, x1 - x2)
    nu = float(np.max(Fx - b)) + 1.0
    n = len(x1)
    return _Point(x1=x1, x2=x2, nu=nu, s=b - Fx + nu, w1=np.where(f1, U1 - x1, 1.0),
                  w2=np.where(f2, U2 - x2, 1.0), y=np.full(len(b), 1.0 / len(b)),
                  z1=np.full(n, scale), z2=np.full(n, scale), v1=np.where(f1, scale, 0.0),
                  v2=np.where(f2, scale, 0.0), f1=f1, f2=f2)


def _columns_inside(x1, x2, v1, v2, U1, U2, f1, f2, mu: float):
    """A warm start's columns ``x1, x2`` within ``sqrt(mu)`` of a (new) upper bound moved
    that far inside it (at most half way), their distances ``w1, w2`` to the bounds and the
    bounds' duals ``v1, v2``, where a bound is new here the one that centres it."""
    gap = np.sqrt(mu)

    def inside(x, U, f):
        return np.where(f, np.minimum(x, U - np.minimum(0.5 * U, gap)), x)

    x1, x2 = inside(x1, U1, f1), inside(x2, U2, f2)
    w1, w2 = np.where(f1, U1 - x1, 1.0), np.where(f2, U2 - x2, 1.0)
    v1 = np.where(f1, np.where(v1 > 0.0, v1, mu / w1), 0.0)
    v2 = np.where(f2, np.where(v2 > 0.0, v2, mu / w2), 0.0)
    return x1, x2, w1, w2, v1, v2


def _warm_point(F, b, U1, U2, f1, f2, start: WarmStart) -> _Point:
    """``start`` made interior for this LP: columns closer than ``sqrt(mu)`` to a (new)
    upper bound are moved that far inside it (at most half way), ``nu`` is raised until the
    new rows (NaN in ``start``) have slacks of at least ``sqrt(mu)``, and they get the duals
    ``mu / s``; the residuals this leaves are the infeasible method's to remove."""
    gap = np.sqrt(start.mu)
    x1, x2, w1, w2, v1, v2 = _columns_inside(start.x1, start.x2, start.v1, start.v2, U1, U2,
                                             f1, f2, start.mu)
    new = np.isnan(start.y)
    s, y = start.s.copy(), start.y.copy()
    slack = b[new] - F[new] @ (x1 - x2) + start.nu
    # the free nu lifts every slack alike: by enough to keep the new rows, violated at the
    # previous point, at least sqrt(mu) inside (their slacks put at sqrt(mu) instead are far
    # from the residual, which can stall the solve)
    shift = max(0.0, gap - float(slack.min(initial=np.inf)))
    s += shift
    s[new] = slack + shift
    y[new] = start.mu / s[new]
    return _Point(x1=x1, x2=x2, nu=start.nu + shift, s=s, w1=w1, w2=w2, y=y, z1=start.z1.copy(),
                  z2=start.z2.copy(), v1=v1, v2=v2, f1=f1, f2=f2)


def dense_mrc_ipm(F, b, c1, c2, u1, u2, *, tol: float = 1e-8, max_iter: int = 100,
                  time_limit: float | None = None, start: WarmStart | None = None) -> IPMResult:
    """Solve the LP of the module docstring by Mehrotra's predictor-corrector method.

    Parameters
    ----------
    F : ndarray of shape (r, n)
        Row coefficients of ``x1`` (those of ``x2`` are ``-F``).
    b : ndarray of shape (r,)
    c1, c2 : ndarray of shape (n,)
        Costs of ``x1`` and ``x2`` (``nu`` costs 1).
    u1, u2 : ndarray of shape (n,)
        Upper bounds (``inf``: none).
    tol : float
        Relative primal and dual infeasibility and duality gap at which it stops. Where
        rounding keeps it from getting there, it stops after a few iterations without
        progress and returns the best iterate, converged if within 1e-6.
    max_iter : int
    time_limit : float or None
        Seconds; the best iterate so far is returned with ``time_limit_reached``.
    start : WarmStart or None
        An iterate of a previous solve (``IPMResult.warm``, its rows re-indexed to these by
        :meth:`WarmStart.rows_for`) to start from; the columns must be the same. None: a
        cold start.

    Returns
    -------
    IPMResult

    Examples
    --------
    The rows ``mu - nu <= 0`` and ``-mu - nu <= -1`` (``mu = x1 - x2``) and costs that make
    ``mu`` pay ``0.5 |mu|``: ``max(mu, 1 - mu) + 0.5 |mu|`` is least, 0.75, at ``mu = 0.5``,
    where both rows hold with the weights 1/4 and 3/4.

    >>> import numpy as np
    >>> res = dense_mrc_ipm(np.array([[1.0], [-1.0]]), np.array([0.0, -1.0]),
    ...                     np.array([0.5]), np.array([0.5]), np.array([np.inf]),
    ...                     np.array([np.inf]))
    >>> res.converged, round(res.objective, 6), np.round(res.y, 6).tolist()
    (True, 0.75, [0.25, 0.75])
    >>> round(float(res.x1[0] - res.x2[0]), 6)
    0.5
    """
    t0 = time.perf_counter()
    F = np.ascontiguousarray(F, dtype=np.float64)
    r, n = F.shape
    b, c1, c2 = (np.asarray(v, dtype=np.float64) for v in (b, c1, c2))
    u1, u2 = np.asarray(u1, np.float64), np.asarray(u2, np.float64)
    f1, f2 = np.isfinite(u1), np.isfinite(u2)
    U1, U2 = np.where(f1, u1, 0.0), np.where(f2, u2, 0.0)

    scale = 1.0 + max(float(np.abs(c1).max(initial=0.0)), float(np.abs(c2).max(initial=0.0)))
    p = (_cold_point(F, b, U1, U2, f1, f2, scale) if start is None
         else _warm_point(F, b, U1, U2, f1, f2, start))

    norm_b = 1.0 + float(np.abs(b).max(initial=0.0))
    n_comp = r + 2 * n + int(f1.sum()) + int(f2.sum())
    timed_out = False
    best, n_iter = _Best(p), 0
    warm = None
    while n_iter < max_iter:
        n_iter += 1
        Fty = _dot(F, p.y, True)
        r_nu = 1.0 - p.y.sum()
        r1 = c1 + Fty - p.z1 + p.v1
        r2 = c2 - Fty - p.z2 + p.v2
        rp = _dot(F, p.x1 - p.x2) - p.nu + p.s - b
        p_obj = p.nu + c1 @ p.x1 + c2 @ p.x2
        d_obj = -b @ p.y - U1 @ p.v1 - U2 @ p.v2
        merit = max(float(np.abs(rp).max()) / norm_b,
                    max(abs(r_nu), float(np.abs(r1).max()), float(np.abs(r2).max())) / scale,
                    abs(p_obj - d_obj) / (1.0 + abs(p_obj)))
        best.update(merit, p)
        products = p.products()
        mu = sum(float(q.sum()) for q in products) / n_comp
        if warm is None and merit <= _WARM_AT:
            warm = WarmStart(p.x1, p.x2, p.z1, p.z2, p.v1, p.v2, p.nu, p.y, p.s, mu)
        # near the end the normal equations lose the accuracy that primal feasibility needs
        # and the residuals grow again: the best iterate is the answer
        if merit <= tol or best.stalled >= _STALL:
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            timed_out = True
            break

        p = _predictor_corrector(p, _newton(F, p, r_nu, r1, r2, rp), products, mu, n_comp)

    p = best.point
    objective = float(p.nu + c1 @ p.x1 + c2 @ p.x2)
    # onto the upper bounds whose dual exceeds the distance to them, as at a vertex: the box
    # of the generation binds where a column sits at its bound (moves by at most sqrt(mu))
    x1 = np.where(f1 & (p.v1 > p.w1), U1, p.x1)
    x2 = np.where(f2 & (p.v2 > p.w2), U2, p.x2)
    return IPMResult(x1, x2, p.nu, p.y, p.s, p.z1 - p.v1, p.z2 - p.v2, objective, n_iter,
                     bool(best.merit <= _ACCEPT), timed_out, time.perf_counter() - t0, warm)
