"""Kernels of the 0-1 minimax risk classifier: the most violated label subset of every sample.

For scores ``V[i, y]`` the quantity ``g[i] = max_C (sum_{y in C} V[i, y] - 1) / |C| + 1`` over
the nonempty label subsets ``C`` is attained, for each size ``k``, by the ``k`` largest scores;
sorting a row once and scanning its prefix sums gives the best size (the Numba kernel sorts,
with many classes, only the scores near the answer: :func:`_top_scores`). The Numba kernel and
the array-generic version (NumPy / CuPy) return identical values and sizes (the smallest
maximizing size on ties).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["most_violated_cpu", "most_violated_xp", "subset_weights", "thresholds_cpu"]


#: from this many classes on, the kernel sorts only the scores near the threshold (below it,
#: sorting all of them is cheaper; the two break even at about 20 classes, and the
#: selection's gain grows with the classes)
_SELECT_FROM = 24


@njit(cache=True, fastmath={"reassoc"})
def _threshold(row):  # pragma: no cover - compiled
    """``(t, c)``: the threshold ``t`` with ``sum_y (v_y - t)_+ = 1`` for the scores ``row``
    and the number ``c`` of scores above it, by Michelot's passes: ``t`` rises from the mean
    of all (a prefix mean of the sorted scores, hence at most the peak) to the threshold,
    each pass keeping the scores above the last ``t``. ``t`` is the best subset's value
    ``max_C (sum_C v - 1) / |C|`` (up to rounding: its sum is not in sorted order) and ``c``
    its size. (Its sums may be reassociated: vectorized, the passes take a fraction of the
    time with many classes.)"""
    K = row.shape[0]
    total = 0.0
    for k in range(K):
        total += row[k]
    count = K
    t = (total - 1.0) / K
    while True:
        s = 0.0
        c = 0
        for k in range(K):
            # a select, not a branch: whether a score is above t is unpredictable, and a
            # branching loop is several times slower
            x = row[k]
            above = x > t
            s += x if above else 0.0
            c += 1 if above else 0
        if c >= count or c == 0:
            break
        count = c
        t = (s - 1.0) / c
    return t, count


@njit(cache=True)
def _top_scores(row, v):  # pragma: no cover - compiled
    """Write into ``v`` the scores of ``row`` that may start the best subset, descending, and
    return how many: all of them, or from :data:`_SELECT_FROM` classes on those within a
    margin below the threshold ``t`` with ``sum_y (v_y - t)_+ = 1``. The best subset's size
    is where the prefix means ``(S_k - 1) / k`` peak, and that ``t`` is the peak; beyond
    the scores down to ``t - margin`` they fall below it by at least ``margin / K``, far
    more than rounding, so the scan over these is the full sort's, bit for bit."""
    K = row.shape[0]
    if K < _SELECT_FROM:
        for k in range(K):  # insertion sort, descending
            x = row[k]
            j = k
            while j > 0 and v[j - 1] < x:
                v[j] = v[j - 1]
                j -= 1
            v[j] = x
        return K
    t, _ = _threshold(row)
    top = -np.inf
    for k in range(K):
        top = max(top, row[k])
    low = t - 1e-9 * (abs(top) + abs(t) + 1.0)
    c = 0
    for k in range(K):
        x = row[k]
        if x >= low:
            j = c
            while j > 0 and v[j - 1] < x:
                v[j] = v[j - 1]
                j -= 1
            v[j] = x
            c += 1
    return c


@njit(cache=True)
def most_violated_cpu(V):  # pragma: no cover - compiled
    """``(g, size)`` of every row of the C-contiguous float64 array ``V`` (Numba)."""
    # serial on purpose: ~1 ns per score, far below the LP's cost; a parallel loop was much
    # slower on a busy machine (thread start-up and contention)
    n, K = V.shape
    g = np.empty(n)
    size = np.empty(n, dtype=np.int64)
    v = np.empty(K)
    for i in range(n):
        c = _top_scores(V[i], v)
        best = v[0] - 1.0
        k_best = 1
        acc = v[0]
        for k in range(2, c + 1):
            acc += v[k - 1]
            f = (acc - 1.0) / k
            if f > best:
                best = f
                k_best = k
        g[i] = best + 1.0
        size[i] = k_best
    return g, size


@njit(cache=True)
def thresholds_cpu(V):  # pragma: no cover - compiled
    """``(t, size)`` of every row of the C-contiguous float64 array ``V``: the threshold
    ``t = g - 1`` of :func:`most_violated_cpu` and the number of scores above it, without its
    sorted scan (equal to its ``g - 1`` and ``size`` up to rounding, not bit for bit: for the
    smoothed start, which certifies nothing)."""
    n = V.shape[0]
    t = np.empty(n)
    size = np.empty(n, dtype=np.int64)
    for i in range(n):
        t[i], size[i] = _threshold(V[i])
    return t, size


@njit(cache=True)
def subset_weights(V, t, w):  # pragma: no cover - compiled
    """``G[i, y] = w[i]`` where ``V[i, y] > t[i]`` (the labels of sample ``i``'s best
    subset, :func:`thresholds_cpu`), else 0: one pass, where NumPy's mask and product take
    two and a temporary."""
    n, K = V.shape
    G = np.empty((n, K))
    for i in range(n):
        for y in range(K):
            G[i, y] = w[i] if V[i, y] > t[i] else 0.0
    return G


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
