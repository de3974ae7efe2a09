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
remaining candidates, bounded by the suffix maximum of the gains. The last level scans,
for one prefix, the candidates of equal cover by decreasing gain, so it stops at the first
one whose gain cannot close the gap (:func:`search_index`), and a weighted count stops at the
first word that proves a union errs too much. Chunks are ranges of
``i_1``; ties go to the lexicographically first tuple, with the same ``ub_lt`` / ``ub_le``
semantics as :mod:`exactclf._zero_one._kernels_cpu`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["drop_subsets", "pack_columns", "popcount64", "search_index", "suffix_max",
           "union_search_cpu", "union_search_steps"]


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
    for w in range(u.shape[0]):
        x = ~u[w] if invert else u[w]
        for b in range(masks.shape[0]):
            total += np.int64(popcount64(x & masks[b, w])) << b
    return total


def suffix_max(gain):
    """``top[i] = max(gain[i:])`` (0 past the end): what any one candidate from ``i`` on can
    still bring in."""
    top = np.zeros(len(gain) + 1, dtype=np.int64)
    top[:-1] = np.maximum.accumulate(np.asarray(gain, dtype=np.int64)[::-1])[::-1]
    return top


def search_index(S, cover, gain):
    """What :func:`union_search_steps` needs besides the bitsets: ``(top, order, S_order,
    gain_order, bstart, bend)``. ``top`` is :func:`suffix_max` of ``gain``; the candidates
    of equal ``cover`` (a *bucket*, contiguous since candidates are sorted by cover) are
    ``bstart[i] <= i < bend[i]``, and ``order[bstart[i]:bend[i]]`` lists them by decreasing
    gain (ties by index), so the last level of the search stops in each bucket at the first
    candidate whose gain is too small; ``S_order`` and ``gain_order`` are ``S`` and ``gain``
    in that order, which the scan then reads sequentially."""
    cover = np.asarray(cover)
    gain = np.asarray(gain, dtype=np.int64)
    M = len(cover)
    new = np.r_[True, cover[1:] != cover[:-1]] if M else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(new)
    sizes = np.diff(np.r_[starts, M])
    bstart = np.repeat(starts, sizes).astype(np.int64)
    bend = np.repeat(np.r_[starts[1:], M], sizes).astype(np.int64)
    order = np.lexsort((np.arange(M), -gain, bstart)).astype(np.int64)
    return (suffix_max(gain), order, np.ascontiguousarray(S[order]),
            np.ascontiguousarray(gain[order]), bstart, bend)


@njit(cache=True, nogil=True, inline="always")
def _errors_upto(prefix, row, want, unwanted, limit):
    """Weighted errors of the union ``prefix | row``, word by word: once they reach
    ``limit`` the partial sum (at least ``limit``) is returned, so a union that errs too
    much is rejected after its first words (:func:`exactclf.maxout._exact.point_order` puts
    the points that reject most there)."""
    total = 0
    for w in range(prefix.shape[0]):
        x = prefix[w] | row[w]
        for b in range(unwanted.shape[0]):
            total += np.int64(popcount64(x & unwanted[b, w])) << b
        for b in range(want.shape[0]):
            total += np.int64(popcount64(~x & want[b, w])) << b
        if total >= limit:
            return total
    return total


@njit(cache=True, nogil=True)
def _last_level(prefix, covered, missed, s, cover, order, S_order, gain_order, bstart, bend,
                want, unwanted, best, ub_le):
    """Best last candidate ``j >= s`` for the union ``prefix`` of the others (``covered`` /
    ``missed``: its unwanted weight inside, wanted weight outside): ``(err, j, n_eval,
    steps)``, ``j == -1`` when none errs less than ``best`` (and at most ``ub_le``); ties go
    to the lowest ``j``.

    Buckets of equal cover are visited in increasing cover (hence increasing index), each
    by decreasing gain: the errors are at least ``max(covered, cover) + missed - gain``, so
    a bucket ends at its first candidate that cannot reach ``best``, and the scan at the
    first bucket whose cover alone cannot.
    """
    M = S_order.shape[0]
    found = -1
    n_eval = 0
    steps = 0
    # errors are integers: ``err < best`` and ``err <= ub_le`` as integer limits
    lt = np.int64(np.ceil(min(best, 4e18)))
    le = np.int64(np.floor(min(ub_le, 4e18)))
    pos = bstart[s]
    while pos < M:
        base = max(covered, np.int64(cover[pos]))
        # a later bucket holds higher indices only: it must beat ``lt`` strictly
        if base >= lt or base > le:
            break
        end = bend[pos]
        for q in range(pos, end):
            steps += 1
            tie_ok = found >= pos  # a tie wins only against a higher index of this bucket
            lb = base + max(missed - gain_order[q], 0)
            if lb > lt or lb > le or (lb == lt and not tie_ok):
                break  # gains decrease along the bucket: so do the chances
            j = order[q]
            if j < s or (tie_ok and lb == lt and j > found):
                continue
            limit = min(lt + 1 if tie_ok else lt, le + 1)
            n_eval += 1
            err = _errors_upto(prefix, S_order[q], want, unwanted, limit)
            if err >= limit:
                continue
            if err < lt or j < found:
                lt = err
                found = j
        pos = end
    if found >= 0:
        best = float(lt)
    return best, found, n_eval, steps


@njit(cache=True, nogil=True)
def union_search_steps(S, cover, gain, top, order, S_order, gain_order, bstart, bend, want,
                       unwanted, K, b, ub_lt, ub_le, state, max_steps):
    """Run the search from ``state`` for at most about ``max_steps`` steps (all if negative).

    ``state`` (int64, length K + 1) is ``(depth, i_1, ..., i_K)``: the position of the depth
    first search, updated in place; start it at ``(0, a, ...)`` for the tuples with ``i_1`` in
    ``[a, b)``; ``state[0] == -1`` once they are all settled. A step is one visit of a node
    or of a candidate of the last level (whose scan for one prefix is never split), so a
    call's work is bounded and the caller can check deadlines and interrupts between
    calls; the partial unions of the prefix are rebuilt from the indices on entry.
    ``top, order, S_order, gain_order, bstart, bend`` are :func:`search_index` of ``S``,
    ``cover`` and ``gain``.
    Returns ``(best_val, best_idx, n_evaluated)`` of this call; ``best_idx[0] == -1`` when
    nothing in it beat the bounds.
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
        if depth == K - 1:  # K = 1
            err = cc + mm
            n_eval += 1
            if err < best and err <= ub_le:
                best = err
                best_idx[:] = idx
            idx[depth] += 1
        elif depth == K - 2:
            err, j, n_last, n_steps = _last_level(P[depth + 1], cc, mm, i, cover, order,
                                                  S_order, gain_order, bstart, bend, want,
                                                  unwanted, best, ub_le)
            n_eval += n_last
            steps += n_steps
            if j >= 0:
                best = err
                best_idx[:] = idx
                best_idx[K - 1] = j
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
    return union_search_steps(S, cover, gain, *search_index(S, cover, gain), want, unwanted,
                              K, b, ub_lt, ub_le, state, -1)


@njit(cache=True, nogil=True)
def drop_subsets(starts, V, max_work):
    """Which rows of the bitsets ``V`` to keep: within each group ``starts[g] <= j <
    starts[g + 1]`` (rows ordered so that a superset comes before its subsets), row ``j`` is
    dropped when a kept row of its group holds all its bits. Checks stop (keeping the rest)
    once they have cost ``max_work`` word operations, so the cost is bounded and the same on
    every machine."""
    M, W = V.shape
    keep = np.ones(M, dtype=np.bool_)
    kept = np.empty(M, dtype=np.int64)
    work = 0
    for g in range(starts.shape[0] - 1):
        n_kept = 0
        for j in range(starts[g], starts[g + 1]):
            if work >= max_work:
                return keep
            for k in range(n_kept):
                i = kept[k]
                work += W
                inside = True
                for w in range(W):
                    if V[j, w] & ~V[i, w]:
                        inside = False
                        break
                if inside:
                    keep[j] = False
                    break
            if keep[j]:
                kept[n_kept] = j
                n_kept += 1
    return keep


@njit(cache=True, nogil=True)
def pack_columns(family, columns):
    """``family[:, columns]`` (a boolean matrix) as uint64 bitsets, at least one word a row,
    and the count of each row's points among ``columns``."""
    M, m = family.shape[0], columns.shape[0]
    bits = np.zeros((M, max(1, (m + 63) // 64)), dtype=np.uint64)
    count = np.zeros(M, dtype=np.int64)
    for r in range(M):
        c = 0
        for b in range(m):
            if family[r, columns[b]]:
                bits[r, b >> 6] |= np.uint64(1) << np.uint64(b & 63)
                c += 1
        count[r] = c
    return bits, count
