"""Array-generic (NumPy / CuPy) batched evaluation of the exact linear search.

The plain, obviously-right counterpart of :mod:`._kernels_cpu`: for a batch of consecutive
D-subsets, solve every ``D x (D + 1)`` system at once (batched SVD: the plane's normal is the
last right singular vector), take one matrix product against all points, and count the errors
of both orientations row-wise. Run with NumPy it is the reference implementation; with CuPy it
is the GPU path. It honours the same incumbent semantics as the CPU kernel, so both return the
same model.
"""

from __future__ import annotations

import numpy as np

from .._combinatorics import unrank_batch
from .._geometry import is_canonical_basis

__all__ = ["ice_scan_array"]


def _batch_size(n: int) -> int:
    # keep the (batch x n) side matrix around 2**24 entries
    return int(max(64, min(1 << 16, (1 << 24) // max(n, 1))))


def ice_scan_array(xp, Xh, nrm, wpos, wneg, r0, r1, ub_lt, ub_le, rtol):
    """Search the D-subsets with ranks in ``[r0, r1)`` on the array module ``xp``.

    Returns ``(best_val, best_rank, best_orient, pending)`` where ``pending`` is a list of
    ``(rank, err_pos, err_neg, lower_bound)`` tuples for canonical degenerate planes whose
    lower bound can still win (see :func:`exactclf._zero_one._kernels_cpu.ice_scan_cpu`).
    """
    n, m0 = Xh.shape
    D = m0 - 1
    dXh = xp.asarray(Xh)
    dnrm = xp.asarray(nrm)
    dwp = xp.asarray(wpos)
    dwn = xp.asarray(wneg)
    dminw = xp.minimum(dwp, dwn)
    best_val, best_rank, best_orient = ub_lt, -1, 0
    pending = []
    step = _batch_size(n)
    for b0 in range(r0, r1, step):
        combos = unrank_batch(b0, min(step, r1 - b0), n, D)
        dc = xp.asarray(combos)
        A = dXh[dc]  # (B, D, D + 1)
        _, S, Vh = xp.linalg.svd(A, full_matrices=True)
        normal = Vh[:, -1, :]  # unit normals (B, D + 1)
        scale = xp.max(dnrm[dc], axis=1)
        valid = S[:, -1] > rtol * scale
        vals = normal @ dXh.T  # (B, n)
        thr = rtol * dnrm[None, :]
        pos = vals > thr
        neg = vals < -thr
        rows = xp.arange(dc.shape[0])[:, None]
        pos[rows, dc] = False
        neg[rows, dc] = False
        on = ~(pos | neg)
        posf = pos.astype(xp.float64)
        negf = neg.astype(xp.float64)
        ep = posf @ dwn + negf @ dwp
        em = posf @ dwp + negf @ dwn
        lb = xp.minimum(ep, em) + on.astype(xp.float64) @ dminw
        degenerate = on.sum(axis=1) > D
        ok = valid & (lb <= ub_le)
        exact = ok & ~degenerate & (lb < best_val)
        if bool(exact.any()):
            masked = xp.where(exact, lb, xp.inf)
            i = int(xp.argmin(masked))  # first minimum: the lowest rank
            best_val = float(masked[i])
            best_rank = b0 + i
            best_orient = 1 if float(ep[i]) <= float(em[i]) else -1
        cand = np.flatnonzero(np.asarray(_host(ok & degenerate & (lb < ub_lt))))
        if cand.size:
            on_h = _host(on[xp.asarray(cand)])
            ep_h, em_h, lb_h = (_host(a[xp.asarray(cand)]) for a in (ep, em, lb))
            for t, i in enumerate(cand):
                if is_canonical_basis(Xh, combos[i], np.flatnonzero(on_h[t])):
                    pending.append((b0 + int(i), float(ep_h[t]), float(em_h[t]), float(lb_h[t])))
    return best_val, best_rank, best_orient, pending


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)
