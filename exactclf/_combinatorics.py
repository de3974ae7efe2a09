"""k-combinations of ``range(n)`` in lexicographic order: counting, ranking, chunking.

The exact searches enumerate the D-subsets of the (unique) training points. A subset is
identified by its *rank*, its position in lexicographic order, so that a contiguous rank
range is an independent unit of work (a chunk, see :mod:`exactclf._search`) that any worker,
CPU thread, GPU batch or Dask task can process, and so that ties between equally good
subsets are broken the same way everywhere: the lowest rank wins.

The rank of ``c_0 < c_1 < ... < c_{k-1}`` in lexicographic order is

    sum_j  sum_{v = c_{j-1}+1}^{c_j - 1} C(n - v - 1, k - j - 1)

(with ``c_{-1} = -1``): for each position, the number of subsets that agree on the positions
before it and carry a smaller value at it.
"""

from __future__ import annotations

from math import comb

import numpy as np
from numba import njit

__all__ = [
    "n_combinations",
    "rank_combination",
    "unrank_combination",
    "unrank_batch",
]

# Ranks are int64 in kernels: the search refuses spaces beyond this before starting.
MAX_RANK = np.iinfo(np.int64).max // 4


def n_combinations(n: int, k: int) -> int:
    """Number of k-subsets of an n-set (exact Python integer)."""
    if k < 0 or n < 0 or k > n:
        return 0
    return comb(n, k)


@njit(cache=True)
def _gcd(a, b):
    while b:
        a, b = b, a % b
    return a


@njit(cache=True)
def _comb(n, k):
    """C(n, k) in int64 (callers keep results below ``MAX_RANK``).

    Step ``i`` turns ``r = C(n - k + i - 1, i - 1)`` into ``r * (n - k + i) / i``; dividing
    ``r`` and ``i`` by their gcd first makes ``i / g`` divide ``n - k + i`` (the quotient is an
    integer and ``i / g`` is coprime to ``r / g``), so no intermediate exceeds the result.
    """
    if k < 0 or n < 0 or k > n:
        return 0
    if k > n - k:
        k = n - k
    r = 1
    for i in range(1, k + 1):
        g = _gcd(r, i)
        r = (r // g) * ((n - k + i) // (i // g))
    return r


@njit(cache=True)
def unrank_into(rank, n, k, out):
    """Write the k-subset of ``range(n)`` with lexicographic ``rank`` into ``out``
    (``0 <= rank < C(n, k)``: callers check)."""
    v = 0
    for j in range(k):
        while True:
            below = _comb(n - v - 1, k - j - 1)
            if rank < below:
                break
            rank -= below
            v += 1
        out[j] = v
        v += 1


@njit(cache=True)
def rank_of(c, n):
    """Lexicographic rank of the sorted subset ``c`` of ``range(n)``."""
    k = c.shape[0]
    r = 0
    prev = -1
    for j in range(k):
        for v in range(prev + 1, c[j]):
            r += _comb(n - v - 1, k - j - 1)
        prev = c[j]
    return r


def rank_combination(c, n: int) -> int:
    """Lexicographic rank of the sorted k-subset ``c`` of ``range(n)``.

    Examples
    --------
    >>> rank_combination([0, 1], 4), rank_combination([2, 3], 4)
    (0, 5)
    """
    return int(rank_of(np.asarray(c, dtype=np.int64), n))


def unrank_combination(rank: int, n: int, k: int) -> np.ndarray:
    """The k-subset of ``range(n)`` at lexicographic position ``rank``.

    Examples
    --------
    >>> unrank_combination(5, 4, 2)
    array([2, 3])
    """
    if not 0 <= rank < n_combinations(n, k):
        raise ValueError(f"rank {rank} outside [0, C({n}, {k}))")
    out = np.empty(k, dtype=np.int64)
    unrank_into(rank, n, k, out)
    return out


@njit(cache=True, nogil=True)
def advance_prefix(c, pos, n, k):
    """Move the sorted k-subset ``c`` of ``range(n)`` to the first subset after all those
    sharing ``c[:pos + 1]`` (``pos = k - 1``: the next subset).

    Returns the lowest position that changed, or -1 when the enumeration is exhausted.
    """
    while pos >= 0 and c[pos] == n - k + pos:
        pos -= 1
    if pos < 0:
        return -1
    c[pos] += 1
    for t in range(pos + 1, k):
        c[t] = c[t - 1] + 1
    return pos


@njit(cache=True)
def unrank_batch(r0, count, n, k):
    """The (at most) ``count`` consecutive k-subsets from rank ``r0`` on, one per row."""
    count = max(0, min(count, _comb(n, k) - r0))
    out = np.empty((count, k), dtype=np.int64)
    if count == 0:
        return out
    c = np.empty(k, dtype=np.int64)
    unrank_into(r0, n, k, c)
    for row in range(count):
        out[row] = c
        if advance_prefix(c, k - 1, n, k) < 0:
            break
    return out
