"""Array-generic (NumPy / CuPy) search for the K subsets whose union errs least.

The counterpart of the bitset kernel :func:`exactclf.maxout._kernels_cpu.union_search_cpu`
for array backends: run with NumPy it is the plain reference, with CuPy the GPU path. It
returns the same tuple under the same incumbent semantics, so both give the same network, and
stops on request between bounded pieces of work (a prefix, a block of rows).

Instead of bitsets it uses inclusion-exclusion, which turns the last two levels of the
search into one matrix product. With ``P`` the union of the first ``K - 2`` subsets (a
*prefix*), ``v = (unwanted - want)`` restricted to the points outside ``P`` and ``F`` the 0/1
matrix of candidate subsets, the errors of ``P | F_j | F_k`` are::

    unwanted(P) + want(outside P) + (F v)_j + (F v)_k - (F diag(v) F^T)_{jk}

All terms are integer-valued sums in float64, hence exact. Prefixes are enumerated in
lexicographic order (host side) and cut, like the CPU kernel, as soon as their union covers
too much unwanted weight; the pairs ``j <= k`` of each prefix are evaluated in row blocks, and
the first minimum in row-major order is the lexicographically first tuple.
"""

from __future__ import annotations

import numpy as np

__all__ = ["union_search_array"]

_BLOCK_ENTRIES = 1 << 24  # entries of one (rows x candidates) block of the pair matrix


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _prefixes(cover_host, covered, K, a, b, limit):
    """Non-decreasing index tuples of length ``K - 2`` with first index in ``[a, b)``, in
    lexicographic order, as ``(tuple, union)``; a prefix is skipped (and, candidates being
    sorted by cover, the rest of its level) once ``covered(union)`` reaches ``limit()``."""
    depth = K - 2
    if depth <= 0:
        yield (), None
        return
    stack = [(a, (), None)]
    while stack:
        i, prefix, union = stack.pop()
        stop = b if not prefix else len(cover_host)
        if i >= stop or cover_host[i] >= limit():
            continue
        stack.append((i + 1, prefix, union))  # the next sibling, visited after this subtree
        new = covered.extend(union, i)
        if covered.cost(new) >= limit():
            continue
        if len(prefix) + 1 == depth:
            yield prefix + (i,), new
        else:
            stack.append((i, prefix + (i,), new))


class _Cover:
    """Unions of candidate rows and the unwanted weight they cover, on the device."""

    def __init__(self, F, unwanted):
        self.F, self.unwanted = F, unwanted

    def extend(self, union, i):
        row = self.F[i] > 0
        return row if union is None else union | row

    def cost(self, union):
        return float(self.unwanted @ union.astype(self.unwanted.dtype))


def union_search_array(xp, F, cover, want, unwanted, K, a, b, ub_lt, ub_le, should_stop=None):
    """Best non-decreasing K-tuple of rows of ``F`` with first index in ``[a, b)``.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``.
    F : (M, N) 0/1 float64 array
        Candidate subsets, sorted by ``cover``.
    cover : (M,) float64 array
        Unwanted weight each candidate covers (non-decreasing).
    want, unwanted : (N,) float64 arrays
        Integer weights of the points for being inside / outside the union.
    K : int
        Tuple length.
    a, b : int
        Range of the first index.
    ub_lt, ub_le : float
        Only tuples with errors ``< ub_lt`` and ``<= ub_le`` count.
    should_stop : callable, optional
        Asked before each prefix and each row block; True stops the search there.

    Returns
    -------
    best_val : float
        Errors of the best tuple, ``ub_lt`` when none counts.
    best_idx : (K,) int64 ndarray
        The lexicographically first best tuple; ``best_idx[0] == -1`` when none counts.
    n_evaluated : int
        Tuples evaluated.
    r_stop : int
        Every tuple with a first index below it is settled (``b``: the whole range).
    """
    M = F.shape[0]
    dF = xp.asarray(F)
    dwant = xp.asarray(want)
    dunw = xp.asarray(unwanted)
    cover_host = np.asarray(cover)
    best_val = ub_lt
    best_idx = np.full(K, -1, dtype=np.int64)
    n_eval = 0
    total_want = float(want.sum())

    def limit():
        # a prefix or candidate covering this much unwanted weight cannot count
        return min(best_val, np.nextafter(ub_le, np.inf))

    def stopped():
        return should_stop is not None and should_stop()

    covered = _Cover(dF, dunw)
    for prefix, union in _prefixes(cover_host, covered, K, a, b, limit):
        if prefix and stopped():
            return best_val, best_idx, n_eval, prefix[0]
        if K == 1:
            j0, j1 = a, b
        elif prefix:
            j0, j1 = prefix[-1], M
        else:
            j0, j1 = a, b
        if union is None:
            v = dunw - dwant
            base = total_want
        else:
            outside = (~union).astype(dF.dtype)
            v = (dunw - dwant) * outside
            base = covered.cost(union) + float(dwant @ outside)
        # candidates covering too much unwanted weight cannot take part (sorted by cover)
        kmax = int(np.searchsorted(cover_host, limit(), side="left"))
        j1 = min(j1, kmax)
        if j0 >= j1:
            continue
        s = dF[:kmax] @ v
        if K == 1:
            err = base + s[j0:j1]
            n_eval += j1 - j0
            masked = xp.where((err < best_val) & (err <= ub_le), err, xp.inf)
            t = int(xp.argmin(masked))  # the first minimum: the lowest index
            if bool(xp.isfinite(masked[t])):
                best_val, best_idx[0] = float(masked[t]), j0 + t
            continue
        step = max(1, _BLOCK_ENTRIES // kmax)
        cols = xp.arange(kmax)
        for r0 in range(j0, j1, step):
            if not prefix and stopped():
                return best_val, best_idx, n_eval, r0
            r1 = min(r0 + step, j1)
            G = (dF[r0:r1] * v) @ dF[:kmax].T
            err = base + s[r0:r1, None] + s[None, :] - G
            rows = xp.arange(r0, r1)[:, None]
            ok = (cols[None, :] >= rows) & (err < best_val) & (err <= ub_le)
            n_eval += int((r1 - r0) * kmax - (r1 - r0) * (r0 + r1 - 1) // 2)
            if not bool(ok.any()):
                continue
            masked = xp.where(ok, err, xp.inf)
            t = int(xp.argmin(masked))  # first minimum in row-major order
            j, k = divmod(t, kmax)
            best_val = float(masked.ravel()[t])
            best_idx[:] = (*prefix, r0 + j, k)
    return best_val, best_idx, n_eval, b
