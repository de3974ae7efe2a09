"""The model that realizes a labeling a search proved realizable: the hard-margin separator."""

from __future__ import annotations

import numpy as np

from ._geometry import COPLANAR_RTOL

__all__ = ["max_margin_separator"]


def max_margin_separator(Z: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, float]:
    """Hard-margin separator of a strictly separable labeling: ``min |a|^2 + b^2`` subject to
    ``s_i (a . z_i + b) >= 1`` (the maximum-margin plane through the origin of the lifted
    points ``(z_i, 1)``, the convention of LinearSVC's penalized intercept).

    Solved as a least-distance program by Lawson and Hanson's reduction to non-negative least
    squares (:func:`scipy.optimize.nnls`): with ``G`` the rows ``s_i (z_i, 1)``, the NNLS
    residual ``rho`` of ``[G^T; 1^T] u ~ (0, ..., 0, 1)`` gives ``x = -rho[:-1] / rho[-1]``.
    The constraints are re-checked on the returned plane.

    Raises ``RuntimeError`` when the labeling is not strictly separable (which would mean a
    search reported a labeling no affine classifier realizes).

    Examples
    --------
    >>> Z = np.array([[-1.0], [0.0], [2.0]])
    >>> a, b = max_margin_separator(Z, np.array([False, False, True]))
    >>> np.round([a[0], b], 6)
    array([ 1., -1.])
    """
    from scipy.optimize import nnls

    n, r = Z.shape
    s = np.where(positive, 1.0, -1.0)
    if r == 0 or np.all(s == s[0]):
        return np.zeros(r), float(s[0])
    G = np.hstack([Z, np.ones((n, 1))]) * s[:, None]
    E = np.vstack([G.T, np.ones(n)])
    f = np.zeros(r + 2)
    f[-1] = 1.0
    u, _ = nnls(E, f, maxiter=50 * (n + r + 2))
    rho = E @ u - f
    x = -rho[:-1] / rho[-1] if rho[-1] < -COPLANAR_RTOL else None
    if x is None or not np.all(G @ x > 0.5):
        raise RuntimeError(
            "max-margin separator: the labeling is not strictly linearly separable"
        )
    return x[:r], float(x[r])
