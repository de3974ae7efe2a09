"""Numba CPU kernel of the exact linear search: incremental plane updates with pruning.

The D-subsets of the points are visited in lexicographic order as the leaves of a prefix
tree. Level ``j`` of the tree stores, for every point, its coordinates orthogonal to the span
of the first ``j`` chosen points (see :mod:`exactclf._geometry`), so moving from one subset to
the next only recomputes the levels whose prefix changed, and a leaf's plane is a 2-D cross
product with the last level. Each leaf scans the points in a fixed order, counting the errors
of both orientations at once, and stops as soon as the better of the two, plus the least
possible cost of the points on the plane, cannot beat the incumbent.

Incumbent semantics (what makes every chunking, thread count and backend return the same
model): a chunk ``[r0, r1)`` returns the lowest-ranked subset among those with the smallest
value that is ``< ub_lt`` and ``<= ub_le``; ``ub_lt`` comes from candidates of lower rank (ties
lose to them), ``ub_le`` from candidates of higher rank (ties beat them).

Planes through more than D points ("degenerate": duplicates are merged beforehand, so these
are coplanar distinct points) need a lower-dimensional search of the points on the plane.
The kernel cannot do it; it reports each such plane once (for its canonical basis) as
*pending* with the errors of both orientations off the plane and a lower bound, when that
bound can still win. The caller resolves them and may resume the kernel at ``r_stop``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._combinatorics import advance_prefix, rank_of, unrank_into
from .._geometry import (
    canonical_on_levels,
    cross,
    make_levels,
    pivot,
    side_code,
    update_levels,
)

__all__ = ["ice_scan_cpu", "PENDING_FIELDS"]

#: columns of the pending buffer
PENDING_FIELDS = ("rank", "err_pos", "err_neg", "lower_bound")


@njit(cache=True, nogil=True)
def ice_scan_cpu(Xh, nrm, wpos, wneg, r0, r1, ub_lt, ub_le, rtol, pend):  # noqa: C901 (compiled kernel)
    """Search the D-subsets with lexicographic ranks in ``[r0, r1)``.

    Parameters
    ----------
    Xh : (n, D + 1) homogeneous coordinates of the unique points.
    nrm : (n,) row norms of ``Xh``.
    wpos, wneg : (n,) weight of the point's samples labeled positive / negative.
    r0, r1 : rank range.
    ub_lt, ub_le : incumbent values (see module docstring).
    rtol : relative coplanarity tolerance.
    pend : (capacity, 4) float64 buffer for pending degenerate planes.

    Returns
    -------
    best_val, best_rank, best_orient, n_pending, r_stop
        ``best_rank`` is -1 when nothing beat the incumbents; ``r_stop < r1`` when the
        pending buffer filled up (resume from there).
    """
    n, m0 = Xh.shape
    D = m0 - 1
    L = max(D - 2, 0)
    Qb = make_levels(Xh)
    minw = np.minimum(wpos, wneg)
    tn = rtol * nrm
    scratch = np.empty(m0)
    onp = np.empty(n, dtype=np.int64)
    c = np.empty(D, dtype=np.int64)
    unrank_into(r0, n, D, c)
    best_val = ub_lt
    best_rank = -1
    best_orient = 0
    npend = 0
    cap = pend.shape[0]
    rank = r0
    valid = 0
    while rank < r1:
        valid, dep_at = update_levels(Qb, c, valid, tn, scratch)
        if dep_at >= 0:
            # the prefix c[:dep_at + 1] is affinely dependent: skip its whole subtree
            q = advance_prefix(c, dep_at, n, D)
            if q < 0:
                break
            rank = rank_of(c, n)
            valid = min(valid, q)
            continue
        Q = Qb[L]
        a0, a1, a2 = pivot(Qb, c)
        na = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
        k = c[D - 1]
        while k < n and rank < r1:
            w0, w1, w2 = cross(a0, a1, a2, Q[k, 0], Q[k, 1], Q[k, 2])
            nw = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
            if nw > na * tn[k]:
                # one pass counts the errors of both orientations; the points on the plane
                # (the subset's own among them) add their least possible cost to lbx, and
                # the plane is degenerate iff more than D points lie on it
                ep = 0.0
                em = 0.0
                lbx = 0.0
                non = 0
                pruned = False
                for i in range(n):
                    sc = side_code(w0, w1, w2, nw, Q[i, 0], Q[i, 1], Q[i, 2], tn[i])
                    if sc > 0:
                        ep += wneg[i]
                        em += wpos[i]
                    elif sc < 0:
                        ep += wpos[i]
                        em += wneg[i]
                    else:
                        lbx += minw[i]
                        onp[non] = i
                        non += 1
                    bound = min(ep, em) + lbx
                    if bound >= best_val or bound > ub_le:
                        pruned = True
                        break
                if not pruned:
                    bound = min(ep, em) + lbx
                    if bound < best_val and bound <= ub_le:
                        if non == D:
                            best_val = bound
                            best_rank = rank
                            best_orient = 1 if ep <= em else -1
                        elif canonical_on_levels(Qb, tn, c, k, a0, a1, a2, na, onp, non):
                            if npend == cap:
                                return best_val, best_rank, best_orient, npend, rank
                            pend[npend, 0] = rank
                            pend[npend, 1] = ep
                            pend[npend, 2] = em
                            pend[npend, 3] = lbx
                            npend += 1
            rank += 1
            k += 1
        if rank >= r1 or D == 1:
            break
        # all leaves under this prefix are done: next prefix
        q = advance_prefix(c, D - 2, n, D)
        if q < 0:
            break
        valid = min(valid, q)
    return best_val, best_rank, best_orient, npend, r1
