"""Numba CPU kernel: the K subsets whose union has the fewest weighted errors.

Candidate subsets are bitsets over the points (``uint64`` words), sorted by the weight of
unwanted points they cover (``cover``), which a union can only increase. Weights are integers
represented bit-sliced: level ``b`` of ``want``/``unwanted`` holds the points whose weight has
bit ``b`` set, so a weighted count is a sum of popcounts.

The search runs over non-decreasing index tuples ``i_1 <= ... <= i_K`` (a repeated index is a
network with fewer distinct planes), depth first, keeping the partial unions of the prefix so
each tuple costs one OR and one weighted popcount. A prefix is cut as soon as its union covers
too much unwanted weight; since candidates are sorted, the first candidate that alone covers
too much ends its level. A second bound prunes from the other side: the wanted weight still
outside the prefix union can only shrink by the gains (wanted weight inside) of the
remaining candidates, bounded by the suffix maximum of the gains. Chunks are ranges of
``i_1``; ties go to the lexicographically first tuple, with the same ``ub_lt`` / ``ub_le``
semantics as :mod:`._cpu_ice`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["union_search_cpu", "popcount64"]


@njit(cache=True, nogil=True, inline="always")
def popcount64(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True, nogil=True)
def _weighted(u, masks, invert):
    """Sum of the (bit-sliced) weights of the points in ``u`` (or outside it)."""
    total = 0
    for b in range(masks.shape[0]):
        c = 0
        for w in range(u.shape[0]):
            x = ~u[w] if invert else u[w]
            c += popcount64(x & masks[b, w])
        total += c << b
    return total


@njit(cache=True, nogil=True)
def union_search_cpu(S, cover, gain, want, unwanted, K, a, b, ub_lt, ub_le):
    """Best K-tuple with ``i_1`` in ``[a, b)``.

    ``gain[i]`` is the wanted weight inside candidate ``i``. Returns
    ``(best_val, best_idx, n_evaluated)``; ``best_idx[0] == -1`` when nothing beat the bounds.
    """
    M, W = S.shape
    # suffix maxima of the gains: what any one later candidate can still bring in
    top = np.zeros(M + 1, dtype=np.int64)
    for i in range(M - 1, -1, -1):
        top[i] = max(top[i + 1], gain[i])
    P = np.zeros((K + 1, W), dtype=np.uint64)
    covered = np.zeros(K + 1, dtype=np.int64)  # unwanted weight inside the prefix union
    missed = np.zeros(K + 1, dtype=np.int64)  # wanted weight outside it
    missed[0] = _weighted(P[0], want, True)
    idx = np.empty(K, dtype=np.int64)
    best_idx = np.full(K, -1, dtype=np.int64)
    best = ub_lt
    n_eval = 0
    depth = 0
    idx[0] = a
    while depth >= 0:
        i = idx[depth]
        exhausted = (depth == 0 and i >= b) or i >= M
        if not exhausted:
            # every tuple from here on errs at least this much (candidates sorted by cover,
            # gains bounded by their suffix maximum): both bounds only grow along the level
            rest = missed[depth] - (K - depth) * top[i]
            lb = max(covered[depth], cover[i]) + max(rest, 0)
            exhausted = lb >= best or lb > ub_le
        if exhausted:
            depth -= 1
            if depth >= 0:
                idx[depth] += 1
            continue
        # this candidate alone: the wanted weight it can bring in is at most its gain
        rest = missed[depth] - gain[i] - (K - depth - 1) * top[i]
        lb = max(covered[depth], cover[i]) + max(rest, 0)
        if lb >= best or lb > ub_le:
            idx[depth] += 1
            continue
        for w in range(W):
            P[depth + 1, w] = P[depth, w] | S[i, w]
        cc = _weighted(P[depth + 1], unwanted, False)
        if cc >= best or cc > ub_le:
            idx[depth] += 1
            continue
        mm = _weighted(P[depth + 1], want, True)
        if depth == K - 1:
            err = cc + mm
            n_eval += 1
            if err < best and err <= ub_le:
                best = err
                best_idx[:] = idx
            idx[depth] += 1
        else:
            covered[depth + 1] = cc
            missed[depth + 1] = mm
            depth += 1
            idx[depth] = i
    return best, best_idx, n_eval
