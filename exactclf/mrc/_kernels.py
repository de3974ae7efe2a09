"""Kernels of the 0-1 minimax risk classifier: the most violated label subset of every sample.

For scores ``V[i, y]`` the quantity ``g[i] = max_C (sum_{y in C} V[i, y] - 1) / |C| + 1`` over
the nonempty label subsets ``C`` is attained, for each size ``k``, by the ``k`` largest scores;
sorting a row once and scanning its prefix sums gives the best size. The Numba kernel and the
array-generic version (NumPy / CuPy) return identical values and sizes (the smallest maximizing
size on ties).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["most_violated_cpu", "most_violated_xp"]


@njit(cache=True)
def most_violated_cpu(V):  # pragma: no cover - compiled
    """``(g, size)`` of every row of the C-contiguous float64 array ``V`` (Numba)."""
    # serial on purpose: ~1 ns per score, far below the LP's cost; a parallel loop was much
    # slower on a busy machine (thread start-up and contention)
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


def most_violated_xp(V, xp):
    """``(g, size)`` of every row of ``V`` with array-generic code on the namespace ``xp``.

    Examples
    --------
    >>> import numpy as np
    >>> g, size = most_violated_xp(np.array([[0.9, 0.8, -1.0]]), np)
    >>> np.round(g, 6).tolist(), size.tolist()
    ([1.35], [2])
    """
    K = V.shape[1]
    Vs = -xp.sort(-V, axis=1)
    S = xp.cumsum(Vs, axis=1)
    f = (S - 1.0) / xp.arange(1, K + 1, dtype=V.dtype)
    size = xp.argmax(f, axis=1)
    g = xp.take_along_axis(f, size[:, None], axis=1)[:, 0] + 1.0
    return g, size + 1
