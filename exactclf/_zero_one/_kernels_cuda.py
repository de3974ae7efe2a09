"""Numba CUDA kernel of the exact linear search: one thread per run of consecutive candidates.

The GPU counterpart of :mod:`._kernels_cpu`, with its contract (ranks, incumbent semantics,
pending degenerate planes) and its floating-point decisions: each thread unranks the first
D-subset of its run of ranks and steps through the run in lexicographic order. Where the CPU
kernel keeps every point's coordinates at each level of the prefix tree, a thread holds only
the prefix's Householder vectors (registers and local memory, at most
``MAX_DIM - 2`` of length ``MAX_DIM + 1``) and applies them to each point as it scans it,
with the operations of :func:`exactclf._geometry.project_out` in the same order, so that a
point is on, above or below a plane exactly when the CPU kernel says so. (NVVM would fuse a
multiply and an add, which can move a decision that sits within an ulp of its threshold:
every product here is rounded on its own, ``dmul_rn``, as the CPU rounds it.)

The error count is fused with the evaluation and stops as soon as the better orientation,
plus the least cost of the points on the plane, exceeds the incumbent: the thread's own best
(lower ranks win ties), the caller's ``ub_lt``/``ub_le``, and the best value found by any
thread, held in device memory and lowered by ``atomic.min``. That shared incumbent only
prunes *strictly* worse candidates, so the lowest-ranked candidate of least value is never
pruned, whatever the order in which threads run; a block reduction keeps the lowest
``(value, rank)`` and the host takes the lowest over blocks: the same candidate as the CPU
kernel, on any GPU and launch geometry.

Degenerate planes (more than D points on them) are reported as pending, as by the CPU kernel
(the canonical-basis test runs on the device, on the same levels); the host resolves them.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from numba import config, cuda

from .._backend import quiet_launches

if config.ENABLE_CUDASIM:  # the simulator computes in Python floats: no fused multiply-add
    def _mul(a, b):
        return a * b
else:  # a product rounded on its own, never fused with an add (as on the CPU): same decisions
    from numba.cuda.libdevice import dmul_rn as _mul

__all__ = ["MAX_DIM", "IceScanCuda"]

#: the largest dimension the kernel handles (local arrays have a fixed size)
MAX_DIM = 8
# shapes of the local arrays (compile-time constants): the prefix's Householder vectors, and
# a point's coordinates
_REFLECTORS = MAX_DIM - 2
_COORDS = MAX_DIM + 1
#: threads per block (a power of two: the block reduction halves it)
_THREADS = 128
#: about this many threads per launch, each taking a run of consecutive ranks: enough to
#: fill a large GPU, few enough that a thread's run amortizes its unranking
_TARGET_THREADS = 1 << 18
#: the longest run of ranks per thread
_MAX_RUN = 256


@cuda.jit(device=True, inline=True)
def _sqnorm(q, m):
    """``sum(q[:m] ** 2)``, summed in order."""
    s = 0.0
    for a in range(m):
        s += _mul(q[a], q[a])
    return s


@cuda.jit(device=True, inline=True)
def _cross(a0, a1, a2, q):
    """:func:`exactclf._geometry.cross` of ``a`` and ``q[:3]``, and the norm of the result."""
    w0 = _mul(a1, q[2]) - _mul(a2, q[1])
    w1 = _mul(a2, q[0]) - _mul(a0, q[2])
    w2 = _mul(a0, q[1]) - _mul(a1, q[0])
    return w0, w1, w2, math.sqrt(_mul(w0, w0) + _mul(w1, w1) + _mul(w2, w2))


@cuda.jit(device=True, inline=True)
def _level_coords(Xh, i, level, V, vv, out):
    """Coordinates of point ``i`` at ``level`` of the prefix tree (``out[:D + 1 - level]``):
    ``Xh[i]`` reflected by the first ``level`` Householder vectors, as
    :func:`exactclf._geometry.project_out` computes them. For D = 1 the single level is
    ``Xh[i]`` padded with a zero (see :func:`exactclf._geometry.make_levels`)."""
    m = Xh.shape[1]
    for a in range(m):
        out[a] = Xh[i, a]
    if m == 2:
        out[2] = 0.0
    for j in range(level):
        t = 0.0
        for a in range(m - j):
            t += _mul(V[j, a], out[a])
        t = 2.0 * t / vv[j]
        for a in range(1, m - j):
            out[a - 1] = out[a] - _mul(t, V[j, a])


@cuda.jit(device=True, inline=True)
def _side(w0, w1, w2, nw, q, tol_i):
    """:func:`exactclf._geometry.side_code` of last-level coordinates ``q``."""
    s = _mul(w0, q[0]) + _mul(w1, q[1]) + _mul(w2, q[2])
    thr = nw * tol_i
    if s > thr:
        return 1
    if s < -thr:
        return -1
    return 0


@cuda.jit(device=True)
def _prepare(Xh, tn, c, V, vv, q, plane):
    """The plane through the points ``c``: Householder vectors of the prefix into ``V``,
    ``vv``, and ``plane = (w0, w1, w2, |w|, a0, a1, a2, |a|)`` (last-level normal and pivot).

    Returns False when the points are affinely dependent, with the tests of
    :func:`exactclf._geometry.update_levels` and the CPU kernel's leaf test.
    """
    D = c.shape[0]
    m = D + 1
    for j in range(D - 2):
        p = c[j]
        _level_coords(Xh, p, j, V, vv, q)
        alpha = math.sqrt(_sqnorm(q, m - j))
        if alpha <= tn[p]:
            return False
        for a in range(m - j):
            V[j, a] = q[a]
        V[j, 0] += alpha if V[j, 0] >= 0.0 else -alpha
        for a in range(m - j):
            q[a] = V[j, a]
        vv[j] = _sqnorm(q, m - j)
    L = max(D - 2, 0)
    if D >= 2:
        _level_coords(Xh, c[D - 2], L, V, vv, q)
        if math.sqrt(_sqnorm(q, 3)) <= tn[c[D - 2]]:
            return False
        a0, a1, a2 = q[0], q[1], q[2]
    else:
        a0, a1, a2 = 0.0, 0.0, 1.0
    na = math.sqrt(_mul(a0, a0) + _mul(a1, a1) + _mul(a2, a2))
    k = c[D - 1]
    _level_coords(Xh, k, L, V, vv, q)
    w0, w1, w2, nw = _cross(a0, a1, a2, q)
    if nw <= na * tn[k]:
        return False
    plane[0], plane[1], plane[2], plane[3] = w0, w1, w2, nw
    plane[4], plane[5], plane[6], plane[7] = a0, a1, a2, na
    return True


@cuda.jit(device=True)
def _is_canonical(Xh, tn, c, V, vv, q, plane):
    """:func:`exactclf._geometry.canonical_on_levels`: every point of the plane below
    ``c[-1]`` and not in ``c`` lies in the span of the members of ``c`` below it."""
    D = c.shape[0]
    L = max(D - 2, 0)
    for p in range(c[D - 1]):
        _level_coords(Xh, p, L, V, vv, q)
        if _side(plane[0], plane[1], plane[2], plane[3], q, tn[p]) != 0:
            continue
        j = 0
        while j < D - 1 and c[j] < p:
            j += 1
        if j < D - 1 and c[j] == p:
            continue
        if j <= D - 2:  # p must be in the span of c[:j]: nothing left at level j
            _level_coords(Xh, p, j, V, vv, q)
            if math.sqrt(_sqnorm(q, D + 1 - j)) > tn[p]:
                return False
        elif _cross(plane[4], plane[5], plane[6], q)[3] > plane[7] * tn[p]:
            return False
    return True


@cuda.jit(cache=True)
def _ice_kernel(Xh, tn, wpos, wneg, minw, binom, r0, r1, run, ub_lt, ub_le, c_all, inc,  # noqa: C901 (compiled kernel)
                blk_val, blk_rank, blk_orient, pend, npend, overflow):
    """Thread ``t`` searches ranks ``[r0 + t * run, r0 + (t + 1) * run)`` (within ``r1``).

    ``binom[v, j] = C(v, j)``; ``c_all``: one row of ``D`` ints per thread (the subset);
    ``inc[0]``: the device incumbent; block results in ``blk_*``; pending planes appended to
    ``pend`` (counter ``npend[0]``), the lowest rank of one that did not fit in
    ``overflow[0]``.
    """
    V = cuda.local.array((_REFLECTORS, _COORDS), np.float64)
    vv = cuda.local.array(_REFLECTORS, np.float64)
    q = cuda.local.array(_COORDS, np.float64)
    plane = cuda.local.array(8, np.float64)
    s_val = cuda.shared.array(_THREADS, np.float64)
    s_rank = cuda.shared.array(_THREADS, np.int64)
    s_orient = cuda.shared.array(_THREADS, np.int8)
    n = Xh.shape[0]
    D = Xh.shape[1] - 1
    L = max(D - 2, 0)
    t = cuda.grid(1)
    tid = cuda.threadIdx.x
    best = ub_lt
    best_rank = -1
    best_orient = 0
    first = r0 + t * run
    last = min(first + run, r1)
    if first < last:
        c = c_all[t]
        # unrank ``first`` (as exactclf._combinatorics.unrank_into)
        rem = first
        v = 0
        for j in range(D):
            while rem >= binom[n - v - 1, D - j - 1]:
                rem -= binom[n - v - 1, D - j - 1]
                v += 1
            c[j] = v
            v += 1
        rank = first
        while True:
            if _prepare(Xh, tn, c, V, vv, q, plane):
                w0, w1, w2, nw = plane[0], plane[1], plane[2], plane[3]
                shared_inc = inc[0]
                ep = 0.0
                em = 0.0
                lbx = 0.0
                non = 0
                pruned = False
                for i in range(n):
                    _level_coords(Xh, i, L, V, vv, q)
                    sc = _side(w0, w1, w2, nw, q, tn[i])
                    if sc > 0:
                        ep += wneg[i]
                        em += wpos[i]
                    elif sc < 0:
                        ep += wpos[i]
                        em += wneg[i]
                    else:
                        lbx += minw[i]
                        non += 1
                    bound = min(ep, em) + lbx
                    if bound >= best or bound > ub_le or bound > shared_inc:
                        pruned = True
                        break
                if not pruned:
                    bound = min(ep, em) + lbx
                    if non == D:
                        best = bound
                        best_rank = rank
                        best_orient = 1 if ep <= em else -1
                        cuda.atomic.min(inc, 0, bound)
                    elif _is_canonical(Xh, tn, c, V, vv, q, plane):
                        slot = cuda.atomic.add(npend, 0, 1)
                        if slot < pend.shape[0]:
                            pend[slot, 0] = rank
                            pend[slot, 1] = ep
                            pend[slot, 2] = em
                            pend[slot, 3] = lbx
                        else:
                            cuda.atomic.min(overflow, 0, rank)
            rank += 1
            if rank >= last:
                break
            # next subset in lexicographic order
            j = D - 1
            while c[j] == n - D + j:
                j -= 1
            c[j] += 1
            for u in range(j + 1, D):
                c[u] = c[u - 1] + 1
    # block reduction to the lowest (value, rank)
    s_val[tid] = best
    s_rank[tid] = best_rank
    s_orient[tid] = best_orient
    cuda.syncthreads()
    half = _THREADS // 2
    while half > 0:
        if tid < half:
            o = tid + half
            if s_rank[o] >= 0 and (s_rank[tid] < 0 or s_val[o] < s_val[tid]
                                   or (s_val[o] == s_val[tid] and s_rank[o] < s_rank[tid])):
                s_val[tid] = s_val[o]
                s_rank[tid] = s_rank[o]
                s_orient[tid] = s_orient[o]
        cuda.syncthreads()
        half //= 2
    if tid == 0:
        b = cuda.blockIdx.x
        blk_val[b] = s_val[0]
        blk_rank[b] = s_rank[0]
        blk_orient[b] = s_orient[0]


def _binomials(n: int, k: int) -> np.ndarray:
    """``C(v, j)`` for ``v < n``, ``j < k`` as int64 (exact; those beyond int64, which no valid
    rank reaches, clipped)."""
    top = np.iinfo(np.int64).max
    return np.array([[min(math.comb(v, j), top) for j in range(k)] for v in range(n)],
                    dtype=np.int64)


class IceScanCuda:
    """The device-resident arguments of one linear search and its ``scan`` on the GPU.

    Parameters
    ----------
    Xh : (n, D + 1) homogeneous coordinates of the unique points (``D <= MAX_DIM``).
    nrm : (n,) row norms of ``Xh``.
    wpos, wneg : (n,) weight of the point's samples labeled positive / negative.
    rtol : relative coplanarity tolerance.
    pending_capacity : room for pending degenerate planes per call, as the CPU kernel's
        buffer.
    """

    def __init__(self, Xh, nrm, wpos, wneg, rtol: float, pending_capacity: int = 4096):
        n, m = Xh.shape
        if not 1 <= m - 1 <= MAX_DIM:
            raise ValueError(f"the CUDA kernel handles dimensions 1 to {MAX_DIM}, not {m - 1}")
        self.n, self.dim = n, m - 1
        wpos = np.ascontiguousarray(wpos, dtype=np.float64)
        wneg = np.ascontiguousarray(wneg, dtype=np.float64)
        self._args = tuple(cuda.to_device(a) for a in (
            np.ascontiguousarray(Xh, dtype=np.float64), rtol * np.asarray(nrm, np.float64),
            wpos, wneg, np.minimum(wpos, wneg), _binomials(n, self.dim)))
        self._capacity = pending_capacity
        # one search's chunks may come from several joblib threads: one launch at a time
        self._lock = threading.Lock()

    def scan(self, r0: int, r1: int, ub_lt: float, ub_le: float):
        """Search the ranks ``[r0, r1)``; returns what
        :func:`exactclf._zero_one._kernels_cpu.ice_scan_cpu` does, with ``pending`` as a list
        of ``(rank, err_pos, err_neg, lower_bound)`` tuples.

        ``r_stop < r1`` when the pending planes overflowed the buffer: those below
        ``r_stop`` are all reported; the best candidate may lie beyond ``r_stop`` (it is
        a real candidate, its value exact).
        """
        with self._lock:
            inc = cuda.to_device(np.array([ub_lt]))
            best = (ub_lt, -1, 0)
            while True:
                found, pending, overflow = self._launch(r0, r1, ub_lt, ub_le, inc)
                if found[1] >= 0 and (best[1] < 0 or found[:2] < best[:2]):
                    best = found
                if overflow >= r1:
                    return (*best, pending, r1)
                if overflow > r0:
                    return (*best, [p for p in pending if p[0] < overflow], overflow)
                # the lowest rank itself was left out: try a shorter range
                r1 = r0 + max(1, (r1 - r0) // 2)

    def _launch(self, r0, r1, ub_lt, ub_le, inc):
        count = r1 - r0
        run = int(min(max(-(-count // _TARGET_THREADS), 1), _MAX_RUN))
        n_threads = -(-count // run)
        blocks = -(-n_threads // _THREADS)
        blk_val = cuda.device_array(blocks, np.float64)
        blk_rank = cuda.device_array(blocks, np.int64)
        blk_orient = cuda.device_array(blocks, np.int8)
        c_all = cuda.device_array((blocks * _THREADS, self.dim), np.int64)
        pend = cuda.device_array((self._capacity, 4), np.float64)
        npend = cuda.to_device(np.zeros(1, np.int64))
        overflow = cuda.to_device(np.array([r1], np.int64))
        with quiet_launches():
            _ice_kernel[blocks, _THREADS](*self._args, r0, r1, run, ub_lt, ub_le, c_all, inc,
                                          blk_val, blk_rank, blk_orient, pend, npend, overflow)
        val, rank, orient = (a.copy_to_host() for a in (blk_val, blk_rank, blk_orient))
        found = (ub_lt, -1, 0)
        hit = np.flatnonzero(rank >= 0)
        if hit.size:
            # lowest value, then lowest rank
            b = hit[np.lexsort((rank[hit], val[hit]))[0]]
            found = (float(val[b]), int(rank[b]), int(orient[b]))
        m = min(int(npend.copy_to_host()[0]), self._capacity)
        rows = pend[:m].copy_to_host() if m else np.empty((0, 4))
        pending = [(int(r[0]), float(r[1]), float(r[2]), float(r[3])) for r in rows]
        return found, pending, int(overflow.copy_to_host()[0])
