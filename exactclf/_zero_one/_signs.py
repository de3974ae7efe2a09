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

from .._geometry import AffineFrame
from ._iis import Fixed

__all__ = ["SignedFrame", "signed_frame"]

#: a constraint direction has a component outside the points' affine hull when it exceeds
#: this (the directions are unit vectors; the frame's basis is exact to about eps times its
#: condition number, at most 1e5 where a certificate is possible)
_OUTSIDE_TOL = 1e-9


@dataclass(frozen=True)
class SignedFrame:
    """The rows of a sign-constrained problem: the points' frame (``frame``), the extra
    directions ``extra`` (standardized features, orthonormal columns) the constraints need
    beyond the points' hull, and one unit row per constrained feature (``rows``, in the
    coordinates ``(frame, extra, homogeneous)``) for the features ``features`` with the
    signs ``signs``."""

    frame: AffineFrame
    extra: np.ndarray
    rows: np.ndarray
    features: np.ndarray
    signs: np.ndarray

    @property
    def dim(self) -> int:
        """Columns of a row, less one: the search's planes go through this many rows."""
        return self.frame.dim + self.extra.shape[1]

    def fixed(self) -> Fixed:
        """The constraint rows as the IIS cover takes them (with their exact form in the
        samples' coordinates, ``(s_j e_j, 0)``)."""
        d = len(self.frame.scale)
        samples = np.zeros((len(self.features), d + 1))
        samples[np.arange(len(self.features)), self.features] = self.signs
        return Fixed(self.rows, samples, self.features)

    def points(self, Z: np.ndarray) -> np.ndarray:
        """The rows ``(z, 0, 1)`` of points ``Z`` given in the frame's coordinates."""
        n = len(Z)
        return np.hstack([Z, np.zeros((n, self.extra.shape[1])), np.ones((n, 1))])

    def to_original(self, theta: np.ndarray) -> tuple[np.ndarray, float]:
        """``coef . x + intercept`` in the original features for the row form ``theta``."""
        r = self.frame.dim
        a, g, b = theta[:r], theta[r:self.dim], float(theta[self.dim])
        coef, intercept = self.frame.to_original(a, b)
        if g.size:
            more = (self.extra @ g) / self.frame.scale
            coef = coef + more
            intercept -= float(more @ self.frame.shift + more @ self.frame.origin)
        return coef, intercept


def signed_frame(frame: AffineFrame, signs: np.ndarray) -> SignedFrame:
    """The :class:`SignedFrame` of the constraints ``signs`` (one of -1, 0, 1 per feature:
    ``signs[j] * coef[j] >= 0``) on classifiers of points in ``frame``.

    Examples
    --------
    Two identical features asked to move in opposite directions: the second constraint
    needs a direction that the points (on the diagonal) do not span.

    >>> from exactclf._geometry import affine_frame
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [3.0, 3.0]])
    >>> sf = signed_frame(affine_frame(X), np.array([1, -1]))
    >>> sf.dim, sf.rows.shape
    (2, (2, 3))
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
    # the frame's linear part (basis / norm) and the extra coordinates, then unit rows
    rows = np.hstack([U.T @ frame.basis / frame.norm, U.T @ extra,
                      np.zeros((len(features), 1))])
    rows /= np.linalg.norm(rows, axis=1)[:, None]
    return SignedFrame(frame, extra, rows, features, signs[features].astype(np.float64))
