"""The model that realizes a labeling a search proved realizable: the hard-margin separator.

A search decides that a labeling of the (unique, framed) points is realizable by an affine
classifier; this module returns that classifier. With ``G`` the rows ``s_i (z_i, 1)``, the
hard-margin plane solves ``min |x| s.t. G x >= 1``; its norm is ``1 / margin``, so on a thin
margin (points within ``1e-5`` of the plane, relative to the data's spread) the least-distance
solve loses the plane in rounding. The solve therefore runs in two steps:

1. a strict separator (``G x > 0``): the least-distance program reduced to non-negative least
   squares (Lawson and Hanson), accurate on ordinary margins; else a linear program on the
   normalized rows (HiGHS), refined by stretching space along its direction until the margins
   it got wrong within the solver's tolerance come out right (down to margins of ``1e-15``);
2. the maximum margin from there, by a primal active-set descent that keeps every iterate
   feasible (so it cannot lose the labeling) and works with projections that stay accurate
   however large ``|x|`` is.

Every plane is re-checked in float64. When none reproduces every sign strictly,
:class:`UnrealizableLabeling` carries the best plane found.
"""

from __future__ import annotations

import numpy as np

from ._certificate import StopReason

__all__ = ["UNREALIZABLE_MARGIN", "UnrealizableLabeling", "max_margin_separator", "separate_rows"]

#: smallest tolerance HiGHS accepts for primal and dual feasibility.
_LP_TOL = 1e-10
#: stretch-and-resolve rounds of the LP step (each gains several digits of margin).
_REFINE_ROUNDS = 3


#: the ``stop_reason_`` of a fit whose labeling float64 cannot realize (see below)
#: (an alias of the StopReason member, kept so that imports of it go on working)
UNREALIZABLE_MARGIN = StopReason.UNREALIZABLE_MARGIN


class UnrealizableLabeling(RuntimeError):
    """No plane computed in float64 reproduces the labeling's signs strictly.

    Either the labeling is not strictly linearly separable, or its margin is below what
    float64 can resolve. A caller that proved the labeling realizable should keep ``plane``,
    count the errors of the labeling it realizes (``realized``), and not claim optimality.

    Attributes
    ----------
    plane : tuple of (ndarray of shape (r,), float)
        The plane ``(a, b)`` found with the fewest sign disagreements.
    realized : ndarray of bool of shape (n,)
        ``Z @ a + b > 0`` on that plane.
    n_disagreements : int
        Number of points where ``realized`` differs from the requested labeling (a point on
        the plane counts as realized negative, as ``predict`` sees it).
    """

    def __init__(self, message: str, plane: tuple[np.ndarray, float], realized: np.ndarray,
                 n_disagreements: int):
        super().__init__(message)
        self.plane = plane
        self.realized = realized
        self.n_disagreements = n_disagreements


def _ldp(G: np.ndarray) -> np.ndarray | None:
    """``argmin |x| s.t. G x >= 1`` by Lawson and Hanson's reduction to NNLS, or None.

    With ``E = [G^T; 1^T]`` and ``f = (0, ..., 0, 1)``, the NNLS residual ``rho = E u - f``
    gives ``x = -rho[:-1] / rho[-1]``; ``rho[-1] = 0`` means the constraints are infeasible.
    """
    from scipy.optimize import nnls

    n, m = G.shape
    E = np.vstack([G.T, np.ones(n)])
    f = np.zeros(m + 1)
    f[-1] = 1.0
    try:
        u, _ = nnls(E, f, maxiter=50 * (n + m + 1))
    except RuntimeError:  # iteration limit
        return None
    rho = E @ u - f
    if not rho[-1] < 0.0:
        return None
    x = -rho[:-1] / rho[-1]
    return x if np.all(np.isfinite(x)) else None


def _lp_direction(Gn: np.ndarray) -> np.ndarray | None:
    """``argmax t s.t. Gn x >= t, mean(Gn) . x = 1`` with HiGHS, or None.

    The normalization ``mean(Gn) . x = 1`` rules out ``x = 0``, which a margin below HiGHS's
    absolute tolerance would otherwise let it return; the rows of ``Gn`` span the space and
    average to ``mean(Gn) . x``, so the LP is bounded (``t <= 1``).
    """
    from scipy.optimize import linprog

    n, m = Gn.shape
    c = np.zeros(m + 1)
    c[-1] = -1.0
    res = linprog(c, A_ub=np.hstack([-Gn, np.ones((n, 1))]), b_ub=np.zeros(n),
                  A_eq=np.r_[Gn.mean(axis=0), 0.0][None, :], b_eq=[1.0],
                  bounds=[(None, None)] * m + [(None, 1.0)], method="highs",
                  # presolve declared feasible thin-margin LPs infeasible
                  options={"presolve": False, "primal_feasibility_tolerance": _LP_TOL,
                           "dual_feasibility_tolerance": _LP_TOL})
    if res.status != 0 or res.x is None:
        return None
    return res.x[:m]


def _lp_separator(G: np.ndarray, rounds: int = _REFINE_ROUNDS) -> np.ndarray | None:
    """A separator by linear programming, refined toward ``G x > 0`` (None: the LP failed).

    The LP finds a direction ``u`` whose margins ``g_i = G_i . u / |G_i|`` are right to
    HiGHS's absolute tolerance, so a margin below it can come out with the wrong sign. A
    refinement stretches space along ``u`` by ``1 / sigma`` (``sigma`` a few times the worst
    error), which turns the rows into ``G_i / |G_i| + (1 / sigma - 1) g_i u``: the thin margins
    become of order one, the LP is solved again on the stretched rows, and its solution
    ``y`` maps back to ``x = y + (1 / sigma - 1) (u . y) u``.
    """
    Gn = G / np.linalg.norm(G, axis=1)[:, None]
    x = _lp_direction(Gn)
    for _ in range(rounds):
        if x is None or np.all(G @ x > 0.0):
            break
        u = x / np.linalg.norm(x)
        g = Gn @ u
        stretch = 1.0 / (10.0 * max(-float(g.min()), _LP_TOL)) - 1.0
        H = Gn + np.outer(stretch * g, u)
        y = _lp_direction(H / np.linalg.norm(H, axis=1)[:, None])
        if y is None:
            break
        x = y + stretch * (u @ y) * u
    return x


def _descend(G: np.ndarray, x: np.ndarray, max_iter: int) -> np.ndarray:
    """Primal active-set method for ``min |x|^2 / 2 s.t. G x >= 1`` from a feasible ``x``.

    Every iterate stays feasible, so every iterate separates strictly: the method can only
    improve the margin, never lose the labeling. Each step projects ``x`` onto the row space
    of the working rows ``G_W`` (a QR of at most ``D + 1`` rows), walks toward it until a
    constraint blocks (which joins ``W``), and at a minimum over ``W`` drops the row with the
    most negative multiplier. The projections are relative-accurate however large ``|x|``
    (``1 / margin``) is, unlike the least-distance dual whose multipliers cancel.
    """
    work: list[int] = []
    g = G @ x
    for _ in range(max_iter):
        if work:
            Q = np.linalg.qr(G[work].T)[0]
            p = Q @ (Q.T @ x) - x
        else:
            p = -x
        if np.linalg.norm(p) <= 1e-12 * np.linalg.norm(x):
            if not work:
                return x
            # least squares: rows that rounding made nearly dependent leave R singular
            lam = np.linalg.lstsq(G[work].T, x, rcond=None)[0]
            j = int(np.argmin(lam))
            if lam[j] >= -1e-12 * np.abs(lam).max():
                return x
            del work[j]
            continue
        Gp = G @ p
        blocking = Gp < 0.0
        blocking[work] = False
        alpha, hit = 1.0, -1
        if blocking.any():
            idx = np.flatnonzero(blocking)
            ratios = np.maximum(g[idx] - 1.0, 0.0) / -Gp[idx]
            k = int(np.argmin(ratios))
            if ratios[k] < 1.0:
                alpha, hit = float(ratios[k]), int(idx[k])
        x = x + alpha * p
        g = g + alpha * Gp
        if hit >= 0:
            work.append(hit)
    return x


def max_margin_separator(Z: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, float]:
    """A plane ``(a, b)`` with ``Z @ a + b > 0`` exactly where ``positive``: the hard-margin one.

    The hard-margin separator solves ``min |a|^2 + b^2`` subject to ``s_i (a . z_i + b) >= 1``
    (the maximum-margin plane through the origin of the lifted points ``(z_i, 1)``, the
    convention of LinearSVC's penalized intercept). Every returned plane is re-checked in
    float64: ``sign(Z @ a + b)`` equals the labeling at every point, with no zero. The margin
    is maximal up to rounding, which on margins near float64's resolution (``1e-13`` relative
    to the points' spread) can cost a fraction of it; the signs are never traded for it.

    Parameters
    ----------
    Z : ndarray of shape (n, r)
        Points, best in a well-conditioned frame (:func:`exactclf._geometry.affine_frame`).
    positive : ndarray of bool of shape (n,)
        The labeling to realize.

    Returns
    -------
    a : ndarray of shape (r,)
    b : float

    Raises
    ------
    UnrealizableLabeling
        When no plane found reproduces every sign (the labeling is not strictly linearly
        separable, or not in float64); it carries the best plane found.

    Examples
    --------
    >>> Z = np.array([[-1.0], [0.0], [2.0]])
    >>> a, b = max_margin_separator(Z, np.array([False, False, True]))
    >>> np.round([a[0], b], 6)
    array([ 1., -1.])
    """
    Z = np.asarray(Z, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    n, r = Z.shape
    s = np.where(positive, 1.0, -1.0)
    if r == 0 or np.all(s == s[0]):
        return np.zeros(r), float(s[0])
    x, separates = separate_rows(np.hstack([Z, np.ones((n, 1))]) * s[:, None])
    if separates:
        return x[:r], float(x[r])
    a, b = x[:r], float(x[r])
    realized = Z @ a + b > 0.0
    wrong = int(np.sum(realized != positive))
    raise UnrealizableLabeling(
        "max-margin separator: the labeling is not strictly linearly separable in float64 "
        f"(the best plane found labels {wrong} of {n} points otherwise)",
        (a, b), realized, wrong,
    )


def separate_rows(G: np.ndarray) -> tuple[np.ndarray, bool]:
    """``x`` with ``G x > 0`` at every row, of maximal margin: ``min |x| s.t. G x >= 1``.

    The rows ``G`` are signed (``s_i (z_i, 1)`` for :func:`max_margin_separator`; any rows,
    such as sign constraints at infinity, otherwise). Returns ``(x, True)``, re-checked in
    float64; where no ``x`` found reproduces every sign, ``(x, False)`` with the ``x`` of
    fewest wrong signs (the last coordinate's sign, ``+1``, when none was found at all).

    Examples
    --------
    >>> x, ok = separate_rows(np.array([[1.0, 0.0], [0.0, 1.0]]))
    >>> np.round(x, 6).tolist(), ok
    ([1.0, 1.0], True)
    """
    candidates = []
    # a strict separator: the least-distance program as posed (accurate on ordinary margins),
    # else linear programming; then the margin is maximized from there by a feasible descent
    # (which also polishes a least-distance solution that thin margins left suboptimal)
    for solve in (_ldp, _lp_separator):
        start = solve(G)
        if start is None:
            continue
        candidates.append(start)
        g_min = float((G @ start).min())
        if g_min > 0.0 and np.all(np.isfinite(start / g_min)):
            start = start / g_min
            x = _descend(G, start, max_iter=10 * G.shape[1] + 50)
            return (x if np.all(G @ x > 0.0) else start), True
    best = min(candidates, key=lambda x: int(np.sum((G @ x) <= 0.0)), default=None)
    if best is None:  # no candidate at all: the better constant classifier
        best = np.zeros(G.shape[1])
        best[-1] = 1.0 if np.sum(G[:, -1] > 0) * 2 >= len(G) else -1.0
    return best, False
