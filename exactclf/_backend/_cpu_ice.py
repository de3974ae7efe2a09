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

from .._combinatorics import rank_of, unrank_into
from .._geometry import project_out, side_code

__all__ = ["ice_scan_cpu", "PENDING_FIELDS"]

#: columns of the pending buffer
PENDING_FIELDS = ("rank", "err_pos", "err_neg", "lower_bound")


@njit(cache=True, nogil=True)
def _advance(c, pos, n, k):
    """Move ``c`` to the first subset after all those sharing ``c[:pos + 1]``.

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


@njit(cache=True, nogil=True)
def _is_canonical(Qb, nrm, c, k, onp, non, rtol):
    """Kernel version of :func:`exactclf._geometry.is_canonical_basis` using the levels."""
    D = c.shape[0]
    m0 = Qb.shape[2]
    for t in range(non):
        p = onp[t]
        if p > k:
            continue
        j = 0
        while j < D - 1 and c[j] < p:
            j += 1
        nn = 0.0
        for a in range(m0 - j):
            nn += Qb[j, p, a] * Qb[j, p, a]
        if np.sqrt(nn) > rtol * nrm[p]:
            return False
    return True


@njit(cache=True, nogil=True)
def ice_scan_cpu(Xh, nrm, wpos, wneg, order, r0, r1, ub_lt, ub_le, rtol, pend):
    """Search the D-subsets with lexicographic ranks in ``[r0, r1)``.

    Parameters
    ----------
    Xh : (n, D + 1) homogeneous coordinates of the unique points.
    nrm : (n,) row norms of ``Xh``.
    wpos, wneg : (n,) weight of the point's samples labeled positive / negative.
    order : (n,) scan order of the points (a permutation).
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
    Qb = np.empty((D, n, m0))
    Qb[0] = Xh
    minw = np.minimum(wpos, wneg)
    mark = np.zeros(n, dtype=np.bool_)
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
        # bring the levels up to date for the prefix c[:D - 1]
        dep_at = -1
        while valid < D - 1:
            p = c[valid]
            alpha = project_out(Qb[valid], m0 - valid, p, Qb[valid + 1])
            if alpha <= rtol * nrm[p]:
                dep_at = valid
                break
            valid += 1
        if dep_at >= 0:
            # the prefix c[:dep_at + 1] is affinely dependent: skip its whole subtree
            q = _advance(c, dep_at, n, D)
            if q < 0:
                break
            rank = rank_of(c, n)
            valid = min(valid, q)
            continue
        F0 = 0.0
        for t in range(D - 1):
            F0 += minw[c[t]]
            mark[c[t]] = True
        Q = Qb[D - 1]
        k = c[D - 1]
        while k < n and rank < r1:
            u0 = Q[k, 0]
            u1 = Q[k, 1]
            nu = np.sqrt(u0 * u0 + u1 * u1)
            if nu > rtol * nrm[k]:
                F = F0 + minw[k]
                ep = 0.0
                em = 0.0
                lbx = 0.0
                non = 0
                pruned = False
                for t in range(n):
                    i = order[t]
                    if mark[i] or i == k:
                        continue
                    sc = side_code(u0, u1, nu, Q[i, 0], Q[i, 1], nrm[i], rtol)
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
                    bound = min(ep, em) + F + lbx
                    if bound >= best_val or bound > ub_le:
                        pruned = True
                        break
                if not pruned:
                    bound = min(ep, em) + F + lbx
                    if bound < best_val and bound <= ub_le:
                        if non == 0:
                            best_val = bound
                            best_rank = rank
                            best_orient = 1 if ep <= em else -1
                        elif _is_canonical(Qb, nrm, c, k, onp, non, rtol):
                            if npend == cap:
                                for t in range(D - 1):
                                    mark[c[t]] = False
                                return best_val, best_rank, best_orient, npend, rank
                            pend[npend, 0] = rank
                            pend[npend, 1] = ep
                            pend[npend, 2] = em
                            pend[npend, 3] = F + lbx
                            npend += 1
            rank += 1
            k += 1
        for t in range(D - 1):
            mark[c[t]] = False
        if rank >= r1 or D == 1:
            break
        # all leaves under this prefix are done: next prefix
        q = _advance(c, D - 2, n, D)
        if q < 0:
            break
        valid = min(valid, q)
    return best_val, best_rank, best_orient, npend, r1
