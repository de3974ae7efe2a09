"""The "peaks" classification problem (Haber & Ruthotto, 2017).

MATLAB's ``peaks`` surface on ``[-3, 3]^2`` is cut into level classes of equal width between
its minimum and its maximum on that square; points are drawn uniformly and kept until every
class has its share, then mapped to ``[0, 1]^2``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.optimize import minimize
from sklearn.utils import check_random_state

__all__ = ["peaks", "peaks_range", "peaks_labels", "make_peaks"]


def peaks(x1, x2):
    """MATLAB's ``peaks`` function: a sum of three shifted and scaled Gaussians.

    ``3 (1 - x)^2 e^{-x^2 - (y + 1)^2} - 10 (x/5 - x^3 - y^5) e^{-x^2 - y^2}
    - e^{-(x + 1)^2 - y^2} / 3``

    Examples
    --------
    >>> round(float(peaks(0.0, 0.0)), 4)
    0.981
    """
    x1, x2 = np.asarray(x1, dtype=float), np.asarray(x2, dtype=float)
    return (
        3.0 * (1.0 - x1) ** 2 * np.exp(-(x1**2) - (x2 + 1.0) ** 2)
        - 10.0 * (x1 / 5.0 - x1**3 - x2**5) * np.exp(-(x1**2) - x2**2)
        - np.exp(-((x1 + 1.0) ** 2) - x2**2) / 3.0
    )


@lru_cache(maxsize=1)
def peaks_range() -> tuple[float, float]:
    """Minimum and maximum of :func:`peaks` on ``[-3, 3]^2`` (grid search, then polished).

    Examples
    --------
    >>> lo, hi = peaks_range()
    >>> round(lo, 3), round(hi, 3)
    (-6.551, 8.106)
    """
    t = np.linspace(-3.0, 3.0, 601)
    G1, G2 = np.meshgrid(t, t, indexing="ij")
    V = peaks(G1, G2)
    bounds = [(-3.0, 3.0), (-3.0, 3.0)]
    extremes = []
    for sign, idx in ((1.0, np.argmin(V)), (-1.0, np.argmax(V))):  # min of s * peaks
        x0 = np.array([G1.flat[idx], G2.flat[idx]])
        res = minimize(lambda x, s=sign: s * float(peaks(x[0], x[1])), x0, bounds=bounds,
                       method="L-BFGS-B")
        extremes.append(sign * min(float(res.fun), sign * float(V.flat[idx])))
    return extremes[0], extremes[1]


def peaks_labels(X01, n_classes: int = 5) -> np.ndarray:
    """Level class (``0 .. n_classes-1``, low to high) of points given in ``[0, 1]^2``."""
    X01 = np.asarray(X01, dtype=float)
    lo, hi = peaks_range()
    v = peaks(6.0 * X01[:, 0] - 3.0, 6.0 * X01[:, 1] - 3.0)
    edges = np.linspace(lo, hi, n_classes + 1)[1:-1]
    return np.searchsorted(edges, v, side="right").astype(np.intp)


def make_peaks(n_samples: int = 5000, *, n_classes: int = 5, random_state=None):
    """Points in ``[0, 1]^2`` labeled by the level class of MATLAB's ``peaks`` surface.

    The classes are ``n_classes`` equal-width intervals between the minimum and maximum of
    ``peaks`` on ``[-3, 3]^2``; uniform points are drawn (rejection sampling) until every
    class holds ``n_samples // n_classes`` points (the remainder goes to the first classes),
    so the classes are balanced although their areas are not. This is the benchmark of
    Haber & Ruthotto, "Stable architectures for deep neural networks" (2017).

    Parameters
    ----------
    n_samples : int, default=5000
    n_classes : int, default=5
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        Coordinates in ``[0, 1]^2`` (``(x + 3) / 6`` of the peaks domain).
    y : ndarray of shape (n_samples,)
        Integer classes ``0 .. n_classes-1``, in random order.

    Examples
    --------
    >>> X, y = make_peaks(500, random_state=0)
    >>> X.shape, np.bincount(y).tolist()
    ((500, 2), [100, 100, 100, 100, 100])
    >>> bool(X.min() >= 0 and X.max() <= 1)
    True
    """
    rng = check_random_state(random_state)
    quota = np.full(n_classes, n_samples // n_classes)
    quota[: n_samples % n_classes] += 1
    chosen = [np.empty((0, 2)) for _ in range(n_classes)]
    while any(len(c) < q for c, q in zip(chosen, quota, strict=True)):
        cand = rng.uniform(0.0, 1.0, size=(max(20 * n_samples, 10000), 2))
        lab = peaks_labels(cand, n_classes)
        for k in range(n_classes):
            need = quota[k] - len(chosen[k])
            if need > 0:
                chosen[k] = np.vstack([chosen[k], cand[lab == k][:need]])
    X = np.vstack(chosen)
    y = np.repeat(np.arange(n_classes), quota)
    perm = rng.permutation(n_samples)
    return X[perm], y[perm]
