"""Sign constraints on an affine classifier's coefficients, as points at infinity.

In homogeneous coordinates a classifier ``sign(w . x + b)`` is ``theta = (w, b)`` and a
point ``x`` is the row ``(x, 1)``; the constraint ``s_j w_j >= 0`` is the row
``(s_j e_j, 0)``, a point at infinity that ``theta`` must keep on its non-negative side. The
constrained 0-1 problem is the unconstrained one on the points and those rows, each row
weighted above the points' total so that no optimum gives one up
(:func:`exactclf._zero_one._min01.solve_rows` enumerates planes through ``D`` of all the
rows). Strict and weak signs agree: the constraint rows are independent, so the cone
``s_j w_j >= 0`` has an interior, and a classifier with ``w_j = 0`` that realizes a
labeling is tilted into it without changing any point's side.

The frame: the points live in their standardized affine frame
(:func:`exactclf._geometry.affine_frame`), whose basis spans only their affine hull. A
coefficient along a direction the points do not span changes no point's side but can
satisfy a constraint (two identical features ``x_k = x_j`` with opposite signs asked for:
``w_j = 2, w_k = -1`` uses ``x_j`` with a positive weight). The rows therefore get, beyond
the frame's coordinates, those of the constraint directions outside the points' hull (where
every point has coordinate 0), so that the search ranges over every classifier of the
original features.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from .._geometry import AffineFrame
from ._iis import Fixed

__all__ = ["SignedFrame", "signed_frame"]

#: a constraint direction has a component outside the points' affine hull when it exceeds
#: this (the directions are unit vectors; the frame's basis is exact to about eps times its
#: condition number, at most 1e5 where a certificate is possible)
_OUTSIDE_TOL = 1e-9


@dataclass(frozen=True)
class SignedFrame:
    """The rows of a sign-constrained problem in the points' frame (``frame``).

    ``extra`` (standardized features, orthonormal columns) are the directions the
    constraints reach beyond the points' hull, ``full`` the constraint of each constrained
    feature (``features``, with ``signs``) in the coordinates ``(frame, extra)``. The points
    do not see the extra coordinates, so they are eliminated (Fourier-Motzkin: a pair of
    constraints bounding one from both sides leaves their sum, each scaled by its
    coefficient): ``rows`` are the constraints on the frame's coordinates alone, as points
    at infinity ``(c, 0)``, each the sum of the original constraints ``sources[i]`` times
    positive factors. The searches run in the points' own dimension.
    """

    frame: AffineFrame
    extra: np.ndarray
    full: np.ndarray
    rows: np.ndarray
    sources: tuple
    features: np.ndarray
    signs: np.ndarray

    @property
    def dim(self) -> int:
        """Columns of a row, less one: the search's planes go through this many rows."""
        return self.frame.dim

    def fixed(self) -> Fixed:
        """The constraint rows as the IIS cover takes them (with their exact form in the
        samples' coordinates, ``(s_j e_j, 0)``)."""
        d = len(self.frame.scale)
        samples = np.zeros((len(self.features), d + 1))
        samples[np.arange(len(self.features)), self.features] = self.signs
        return Fixed(self.rows, samples, self.features, self.sources)

    def points(self, Z: np.ndarray) -> np.ndarray:
        """The rows ``(z, 1)`` of points ``Z`` given in the frame's coordinates."""
        return np.hstack([Z, np.ones((len(Z), 1))])

    def to_original(self, theta: np.ndarray) -> tuple[np.ndarray, float]:
        """``coef . x + intercept`` in the original features for the row form ``theta``
        (its extra coordinates chosen to keep every constraint as far from 0 as they can,
        by a small linear program; left at 0 where none keeps them all)."""
        r = self.frame.dim
        a, b = theta[:r], float(theta[r])
        coef, intercept = self.frame.to_original(a, b)
        g = self._extra(a)
        if g.size:
            more = (self.extra @ g) / self.frame.scale
            coef = coef + more
            intercept -= float(more @ self.frame.shift + more @ self.frame.origin)
        return coef, intercept

    def _extra(self, a: np.ndarray) -> np.ndarray:
        rho = self.extra.shape[1]
        if rho == 0:
            return np.zeros(0)
        r = self.frame.dim
        base = self.full[:, :r] @ a
        E = self.full[:, r:]
        cap = float(np.abs(base).max()) + 1.0
        # max t  s.t.  base_j + E_j g >= t  (t <= cap keeps it bounded)
        res = linprog(np.r_[np.zeros(rho), -1.0], A_ub=np.hstack([-E, np.ones((len(E), 1))]),
                      b_ub=base, bounds=[(None, None)] * rho + [(None, cap)], method="highs")
        if res.status != 0 or res.x[-1] <= 0:
            return np.zeros(rho)
        return res.x[:rho]


def _eliminate(full: np.ndarray, r: int) -> tuple[np.ndarray, tuple]:
    """Fourier-Motzkin elimination of the columns of ``full`` past the first ``r`` from the
    strict system ``full @ (a, g) > 0``: the rows on ``a`` alone of the system that has a
    ``g`` exactly when the original does, with the original rows each is a positive
    combination of."""
    rows = full
    sources = [(j,) for j in range(len(full))]
    while rows.shape[1] > r:
        col = rows[:, -1]
        size = np.abs(rows).max(axis=1)
        up, down = col > _OUTSIDE_TOL * size, col < -_OUTSIDE_TOL * size
        new = [rows[i, :-1] for i in np.flatnonzero(~(up | down))]
        src = [sources[i] for i in np.flatnonzero(~(up | down))]
        for i in np.flatnonzero(up):
            for k in np.flatnonzero(down):
                new.append(rows[i, :-1] / col[i] - rows[k, :-1] / col[k])
                src.append(tuple(sorted(set(sources[i]) | set(sources[k]))))
        rows = np.array(new).reshape(len(new), rows.shape[1] - 1)
        sources = src
    norm = np.linalg.norm(rows, axis=1)
    # strict constraints that a feasible system implies cannot cancel to 0 > 0; what
    # rounding leaves of one is no constraint
    keep = norm > _OUTSIDE_TOL * max(1.0, float(norm.max(initial=0.0)))
    rows = rows[keep] / norm[keep, None]
    return rows, tuple(np.array(s) for s, k in zip(sources, keep, strict=True) if k)


def signed_frame(frame: AffineFrame, signs: np.ndarray) -> SignedFrame:
    """The :class:`SignedFrame` of the constraints ``signs`` (one of -1, 0, 1 per feature:
    ``signs[j] * coef[j] >= 0``) on classifiers of points in ``frame``.

    Examples
    --------
    Two identical features asked to move in opposite directions: any slope of their sum is
    allowed (``w_j = 2, w_k = -1`` is a slope 1), so no constraint is left on the points'
    line; the same direction asked of both is one constraint.

    >>> from exactclf._geometry import affine_frame
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [3.0, 3.0]])
    >>> signed_frame(affine_frame(X), np.array([1, -1])).rows.shape
    (0, 2)
    >>> signed_frame(affine_frame(X), np.array([1, 1])).rows.shape
    (1, 2)
    """
    signs = np.asarray(signs)
    d, r = frame.basis.shape
    features = np.flatnonzero(signs)
    U = np.zeros((d, len(features)))
    U[features, np.arange(len(features))] = signs[features]
    # the directions of the standardized features orthogonal to the points' hull
    if r:
        left, _, _ = np.linalg.svd(frame.basis, full_matrices=True)
        outside = left[:, r:]
    else:
        outside = np.eye(d)
    G = outside.T @ U
    extra = np.zeros((d, 0))
    if G.size:
        left, s, _ = np.linalg.svd(G, full_matrices=False)
        extra = outside @ left[:, : int(np.sum(s > _OUTSIDE_TOL))]
    # a positive multiple of the standardized constraint direction is the same constraint:
    # the frame's linear part (basis / norm) and the extra coordinates
    full = np.hstack([U.T @ frame.basis / frame.norm, U.T @ extra])
    rows, sources = _eliminate(full, r)
    rows = np.hstack([rows, np.zeros((len(rows), 1))])
    return SignedFrame(frame, extra, full, rows, sources, features,
                       signs[features].astype(np.float64))
