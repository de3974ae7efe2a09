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

__all__ = ["union_search_cpu", "union_search_steps", "suffix_max", "popcount64"]


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


def suffix_max(gain):
    """``top[i] = max(gain[i:])`` (0 past the end): what any one candidate from ``i`` on can
    still bring in."""
    top = np.zeros(len(gain) + 1, dtype=np.int64)
    top[:-1] = np.maximum.accumulate(np.asarray(gain, dtype=np.int64)[::-1])[::-1]
    return top


@njit(cache=True, nogil=True)
def union_search_steps(S, cover, gain, top, want, unwanted, K, b, ub_lt, ub_le, state,
                       max_steps):
    """Run the search from ``state`` for at most ``max_steps`` steps (all if negative).

    ``state`` (int64, length K + 1) is ``(depth, i_1, ..., i_K)``: the position of the depth
    first search, updated in place; start it at ``(0, a, ...)`` for the tuples with ``i_1`` in
    ``[a, b)``; ``state[0] == -1`` once they are all settled. A step is one visit of a node, so
    a call's work is bounded and the caller can check deadlines and interrupts between
    calls; the partial unions of the prefix are rebuilt from the indices on entry. ``top`` is
    :func:`suffix_max` of ``gain``. Returns ``(best_val, best_idx, n_evaluated)`` of this
    call; ``best_idx[0] == -1`` when nothing in it beat the bounds.
    """
    M, W = S.shape
    P = np.zeros((K + 1, W), dtype=np.uint64)
    covered = np.zeros(K + 1, dtype=np.int64)  # unwanted weight inside the prefix union
    missed = np.zeros(K + 1, dtype=np.int64)  # wanted weight outside it
    missed[0] = _weighted(P[0], want, True)
    depth = state[0]
    idx = state[1:]
    for d in range(max(depth, 0)):
        for w in range(W):
            P[d + 1, w] = P[d, w] | S[idx[d], w]
        covered[d + 1] = _weighted(P[d + 1], unwanted, False)
        missed[d + 1] = _weighted(P[d + 1], want, True)
    best_idx = np.full(K, -1, dtype=np.int64)
    best = ub_lt
    n_eval = 0
    steps = 0
    while depth >= 0:
        if max_steps >= 0 and steps >= max_steps:
            break
        steps += 1
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
    state[0] = depth
    return best, best_idx, n_eval


def union_search_cpu(S, cover, gain, want, unwanted, K, a, b, ub_lt, ub_le):
    """Best K-tuple with ``i_1`` in ``[a, b)``, in one unbounded call of
    :func:`union_search_steps`: ``(best_val, best_idx, n_evaluated)``."""
    state = np.zeros(K + 1, dtype=np.int64)
    state[1] = a
    return union_search_steps(S, cover, gain, suffix_max(gain), want, unwanted, K, b,
                              ub_lt, ub_le, state, -1)
