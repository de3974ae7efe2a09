"""Numba CUDA kernel of the exact union search: one block of threads per first candidate index.

The GPU counterpart of :mod:`._kernels_cpu`, with its contract: block ``t`` runs the CPU
kernel's depth-first search (:func:`exactclf.maxout._kernels_cpu.union_search_steps`, the
same bounds, bucket scan and word-by-word early exit, popcounts on ``uint64`` bitsets) over
the tuples whose first index is ``a + t``. Its threads walk the same tree and split the
scans of the last level, where the work is: the candidates sorted by cover put most of it
on the first few indices, which one thread each left to run alone long after the others
had finished. The blocks share an incumbent in device memory, lowered by ``atomic.min``; a
block prunes against it as against ``ub_le`` (ties still pass), so the lexicographically
first tuple of least error is never pruned, and the host takes the lowest ``(errors, first
index)`` over the blocks: the CPU kernel's tuple.

A launch runs each block for a bounded number of steps and keeps its search state on the
device, so the host checks deadlines and interrupts between launches, as the CPU driver does
between kernel calls.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from numba import cuda

from .._backend import quiet_launches

__all__ = ["MAX_K", "MAX_WORDS", "UnionSearchCuda"]

#: the most planes and 64-bit words of points the kernel handles (local arrays have a fixed
#: size); larger searches take the array-generic path
MAX_K = 4
MAX_WORDS = 32
_DEPTHS = MAX_K + 1
#: threads of a block, which search one first index together (they split the last level's
#: scans), and the most a block may have (the size of its shared arrays)
_LANES = 32
_MAX_LANES = 32
#: steps of one block per launch (see union_search_steps): a launch of a few milliseconds
_STEPS = 1 << 14


@cuda.jit(device=True, inline=True)
def _weighted(P, d, W, masks, invert):
    """:func:`exactclf.maxout._kernels_cpu._weighted` of the union ``P[d, :W]``."""
    total = 0
    for w in range(W):
        x = ~P[d, w] if invert else P[d, w]
        for b in range(masks.shape[0]):
            total += np.int64(cuda.popc(x & masks[b, w])) << b
    return total


@cuda.jit(device=True, inline=True)
def _errors_upto(P, d, row, want, unwanted, limit):
    """:func:`exactclf.maxout._kernels_cpu._errors_upto` of ``P[d] | row``."""
    total = 0
    for w in range(row.shape[0]):
        x = P[d, w] | row[w]
        for b in range(unwanted.shape[0]):
            total += np.int64(cuda.popc(x & unwanted[b, w])) << b
        for b in range(want.shape[0]):
            total += np.int64(cuda.popc(~x & want[b, w])) << b
        if total >= limit:
            return total
    return total


@cuda.jit(device=True)
def _last_level(P, d, covered, missed, s, cover, order, S_order, gain_order, bstart, bend,
                want, unwanted, best, ub_le, out, lane, lanes, s_err, s_j):
    """:func:`exactclf.maxout._kernels_cpu._last_level` for the union ``P[d]``, run by the
    ``lanes`` threads of a block together: each takes every ``lanes``-th candidate of a
    bucket, and after each round of ``lanes`` candidates all take the least ``(errors,
    index)`` of the round (through ``s_err``, ``s_j``) and stop the bucket if one of them
    met a candidate that cannot win (gains only decrease along a bucket). Candidates are
    pruned against the bound of the round's start, never a better one: that only evaluates
    more, and the result is the least ``(errors, index)`` over the candidates as on the CPU.
    Returns ``best`` and writes ``(j, n_eval, steps)`` to ``out`` (``n_eval``: this
    thread's evaluations; the rest is the same in every thread)."""
    M = S_order.shape[0]
    found = -1
    n_eval = 0
    steps = 0
    lt = int(math.ceil(min(best, 4e18)))
    le = int(math.floor(min(ub_le, 4e18)))
    pos = bstart[s]
    while pos < M:
        base = max(covered, cover[pos])
        if base >= lt or base > le:
            break
        end = bend[pos]
        first = pos
        while first < end:
            q = first + lane
            stop = 0
            err = -1
            j = -1
            if q < end:
                tie_ok = found >= pos
                lb = base + max(missed - gain_order[q], 0)
                if lb > lt or lb > le or (lb == lt and not tie_ok):
                    stop = 1
                else:
                    j = order[q]
                    if j < s or (tie_ok and lb == lt and j > found):
                        j = -1
                    else:
                        limit = min(lt + 1 if tie_ok else lt, le + 1)
                        n_eval += 1
                        err = _errors_upto(P, d, S_order[q], want, unwanted, limit)
                        if err >= limit:
                            j = -1
            s_err[lane] = err
            s_j[lane] = j
            stopped = cuda.syncthreads_or(stop)
            for u in range(lanes):
                if s_j[u] >= 0 and (s_err[u] < lt or (s_err[u] == lt and s_j[u] < found)):
                    lt = s_err[u]
                    found = s_j[u]
            cuda.syncthreads()  # every thread has read the round before the next writes
            steps += min(lanes, end - first)
            if stopped:
                break
            first += lanes
        pos = end
    out[0], out[1], out[2] = found, n_eval, steps
    return float(lt) if found >= 0 else best


@cuda.jit(cache=True)
def _union_kernel(S, cover, gain, top, order, S_order, gain_order, bstart, bend, want,  # noqa: C901 (compiled kernel)
                  unwanted, a, ub_le, inc, state, best_val, best_idx, n_eval, max_steps):
    """Block ``t`` resumes the search of first index ``a + t`` from ``state[t]`` (as
    :func:`exactclf.maxout._kernels_cpu.union_search_steps`) with its best so far in
    ``best_val[t]``, ``best_idx[t]``; ``inc[0]``: the incumbent shared by all blocks, read
    when the launch starts; ``n_eval[0]``: the count of evaluated tuples. Every thread of
    the block walks the same search tree (the same decisions, so the block never diverges
    at a barrier); they split the scans of the last level (:func:`_last_level`), and the
    first thread writes the block's results."""
    t = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    lanes = cuda.blockDim.x
    if t >= state.shape[0] or state[t, 0] < 0:
        return
    s_err = cuda.shared.array(_MAX_LANES, np.int64)
    s_j = cuda.shared.array(_MAX_LANES, np.int64)
    P = cuda.local.array((_DEPTHS, MAX_WORDS), np.uint64)
    covered = cuda.local.array(_DEPTHS, np.int64)
    missed = cuda.local.array(_DEPTHS, np.int64)
    idx = cuda.local.array(_DEPTHS, np.int64)
    last = cuda.local.array(3, np.int64)
    M, W = S.shape
    K = best_idx.shape[1]
    b = a + t + 1
    depth = state[t, 0]
    for u in range(K):
        idx[u] = state[t, u + 1]
    s_le = cuda.shared.array(1, np.float64)
    if lane == 0:  # one read of the shared incumbent: the block's decisions must agree
        s_le[0] = min(ub_le, inc[0])
    best = best_val[t]
    cuda.syncthreads()  # and every thread has read the state before the first one writes it
    le = s_le[0]
    for w in range(W):
        P[0, w] = 0
    covered[0] = 0
    missed[0] = _weighted(P, 0, W, want, True)
    for d in range(depth):
        for w in range(W):
            P[d + 1, w] = P[d, w] | S[idx[d], w]
        covered[d + 1] = _weighted(P, d + 1, W, unwanted, False)
        missed[d + 1] = _weighted(P, d + 1, W, want, True)
    found = False
    evaluated = 0
    steps = 0
    while depth >= 0 and steps < max_steps:
        steps += 1
        i = idx[depth]
        exhausted = (depth == 0 and i >= b) or i >= M
        if not exhausted:
            rest = missed[depth] - (K - depth) * top[i]
            lb = max(covered[depth], cover[i]) + max(rest, 0)
            exhausted = lb >= best or lb > le
        if exhausted:
            depth -= 1
            if depth >= 0:
                idx[depth] += 1
            continue
        rest = missed[depth] - gain[i] - (K - depth - 1) * top[i]
        lb = max(covered[depth], cover[i]) + max(rest, 0)
        if lb >= best or lb > le:
            idx[depth] += 1
            continue
        for w in range(W):
            P[depth + 1, w] = P[depth, w] | S[i, w]
        cc = _weighted(P, depth + 1, W, unwanted, False)
        if cc >= best or cc > le:
            idx[depth] += 1
            continue
        mm = _weighted(P, depth + 1, W, want, True)
        if depth == K - 1:  # K = 1: every thread evaluates it, the first counts it
            err = cc + mm
            if lane == 0:
                evaluated += 1
            if err < best and err <= le:
                best = err
                found = True
                if lane == 0:
                    for u in range(K):
                        best_idx[t, u] = idx[u]
            idx[depth] += 1
        elif depth == K - 2:
            err = _last_level(P, depth + 1, cc, mm, i, cover, order, S_order, gain_order,
                              bstart, bend, want, unwanted, best, le, last, lane, lanes,
                              s_err, s_j)
            evaluated += last[1]
            steps += last[2]
            if last[0] >= 0:
                best = err
                found = True
                if lane == 0:
                    for u in range(K - 1):
                        best_idx[t, u] = idx[u]
                    best_idx[t, K - 1] = last[0]
            idx[depth] += 1
        else:
            covered[depth + 1] = cc
            missed[depth + 1] = mm
            depth += 1
            idx[depth] = i
    cuda.atomic.add(n_eval, 0, evaluated)
    if lane == 0:
        state[t, 0] = depth
        for u in range(K):
            state[t, u + 1] = idx[u]
        if found:
            best_val[t] = best
            cuda.atomic.min(inc, 0, best)


class UnionSearchCuda:
    """The device-resident arguments of one union search and its chunks on the GPU.

    Parameters
    ----------
    args : ``(S, cover, gain, want_masks, other_masks)``, see
        :func:`exactclf.maxout._exact.bitset_kernel_args`.
    index : :func:`exactclf.maxout._kernels_cpu.search_index` of them.
    K : number of planes (at most :data:`MAX_K`; at most :data:`MAX_WORDS` words of
        points).
    """

    def __init__(self, args, index, K: int):
        S, cover, gain, want, unwanted = args
        if not self.fits(K, S.shape[1]):
            raise ValueError(f"the CUDA kernel handles K <= {MAX_K} and at most "
                             f"{64 * MAX_WORDS} points")
        self.K = K
        top, order, S_order, gain_order, bstart, bend = index
        self._args = tuple(cuda.to_device(np.ascontiguousarray(x)) for x in (
            S, np.asarray(cover, np.int64), gain, top, order, S_order, gain_order, bstart,
            bend, want, unwanted))
        # chunks may come from several joblib threads: one launch at a time
        self._lock = threading.Lock()

    @staticmethod
    def fits(K: int, n_words: int) -> bool:
        """Whether the kernel handles ``K`` planes over ``n_words`` words of points."""
        return 1 <= K <= MAX_K and n_words <= MAX_WORDS

    def search(self, a: int, b: int, ub_lt: float, ub_le: float, should_stop=None):
        """Best K-tuple with first index in ``[a, b)``: ``(best_val, best_idx, n_evaluated,
        r_stop)`` as the CPU driver's kernel in :func:`exactclf.maxout._exact.exact_union`
        (``r_stop < b`` when ``should_stop()`` ended it: the first indices below are
        settled; the best tuple may lie beyond, a real one, its errors exact)."""
        count = b - a
        state = np.zeros((count, self.K + 1), dtype=np.int64)
        state[:, 1] = np.arange(a, b)
        with self._lock:
            d_state = cuda.to_device(state)
            best_val = cuda.to_device(np.full(count, ub_lt))
            best_idx = cuda.to_device(np.full((count, self.K), -1, dtype=np.int64))
            inc = cuda.to_device(np.array([ub_lt]))
            n_eval = cuda.to_device(np.zeros(1, dtype=np.int64))
            r_stop = b
            while True:
                with quiet_launches():
                    _union_kernel[count, _LANES](*self._args, a, ub_le, inc, d_state,
                                                 best_val, best_idx, n_eval, _STEPS)
                open_ = np.flatnonzero(d_state.copy_to_host()[:, 0] >= 0)
                if open_.size == 0:
                    break
                if should_stop is not None and should_stop():
                    r_stop = a + int(open_[0])
                    break
            vals, idx = best_val.copy_to_host(), best_idx.copy_to_host()
            n_total = int(n_eval.copy_to_host()[0])
        hit = np.flatnonzero(idx[:, 0] >= 0)
        if hit.size == 0:
            return ub_lt, np.full(self.K, -1, dtype=np.int64), n_total, r_stop
        t = hit[np.argmin(vals[hit])]  # the first least value: the lowest first index
        return float(vals[t]), idx[t].copy(), n_total, r_stop
