"""Exact minimization of the weighted 0-1 loss of a line in the plane, by rotational sweeps.

For points spanning the plane, the optimum is the least, over the lines through two of the
points, of the errors of the better side off the line plus the best labeling of the points
on it that a tilt of the line realizes: a threshold on the line, either way (the recursion
of :mod:`exactclf._zero_one._min01` for ``D = 2``). Every such line holds some point ``p``,
so it is found by a line through ``p`` turning half a turn: the other points, sorted by the
direction in which they lie from ``p`` (modulo a half turn), cross the line one direction
at a time, each changing side once, so the weights on each side are kept up to date in
constant time per point. One sweep per point costs ``O(n log n)``, all of them
``O(n^2 log n)``, where the enumeration of the ``C(n, 2)`` lines scans the points of each
line (``O(n^3)`` with early exit).

Points lie on the line through ``p`` in direction ``L`` when ``|L x d| <=
COPLANAR_RTOL |L| |d|`` (``d`` the point's offset from ``p``), the tolerance of the
enumeration's coplanarity decisions, in the same standardized frame; directions within it
of a direction already taken join it.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._geometry import COPLANAR_RTOL

__all__ = ["best_line"]


@njit(cache=True, nogil=True)
def _half_turn(dx, dy):
    """The direction ``(dx, dy)`` or its opposite, whichever has angle in ``[0, pi)``."""
    if dy < 0.0 or (dy == 0.0 and dx < 0.0):
        return -dx, -dy
    return dx, dy


@njit(cache=True, nogil=True)
def _directions(Z, p, rtol):
    """The other points seen from ``Z[p]``: their offsets ``D``, their order by direction
    modulo a half turn, and the groups of that order (``starts``: where each begins, the
    first member its leader) of points on one line through ``Z[p]``."""
    n = Z.shape[0]
    D = Z - Z[p]
    ang = np.empty(n)
    for i in range(n):
        dx, dy = _half_turn(D[i, 0], D[i, 1])
        ang[i] = np.arctan2(dy, dx)
    ang[p] = np.inf  # the pivot sorts last and is left out
    order = np.argsort(ang, kind="mergesort")[: n - 1]
    starts = np.empty(n, dtype=np.int64)
    ng = 0
    lead = -1
    for k in range(n - 1):
        i = order[k]
        if lead >= 0:
            cr = D[lead, 0] * D[i, 1] - D[lead, 1] * D[i, 0]
            nl = np.sqrt(D[lead, 0] ** 2 + D[lead, 1] ** 2)
            ni = np.sqrt(D[i, 0] ** 2 + D[i, 1] ** 2)
            if abs(cr) <= rtol * nl * ni:
                continue
        starts[ng] = k
        ng += 1
        lead = i
    starts[ng] = n - 1
    # the last direction may be within the tolerance of the first (a half turn apart):
    # its points then join the first group (moved to the front of the order)
    if ng > 1:
        a, b = order[0], order[starts[ng - 1]]
        cr = D[a, 0] * D[b, 1] - D[a, 1] * D[b, 0]
        na = np.sqrt(D[a, 0] ** 2 + D[a, 1] ** 2)
        nb = np.sqrt(D[b, 0] ** 2 + D[b, 1] ** 2)
        if abs(cr) <= rtol * na * nb:
            m = n - 1 - starts[ng - 1]
            order = np.concatenate((order[: starts[1]], order[starts[ng - 1]:],
                                    order[starts[1]: starts[ng - 1]]))
            for g in range(1, ng - 1):
                starts[g] += m
            ng -= 1
            starts[ng] = n - 1
    return D, order, starts[: ng + 1]


@njit(cache=True, nogil=True)
def _on_line(D, members, lead, p, wpos, wneg, positive, write):
    """The best labeling of the pivot ``p`` and ``members`` within their line (a threshold
    on the position along ``D[lead]``, either way): its errors, written to ``positive`` when
    ``write``."""
    m = members.shape[0] + 1
    t = np.empty(m)
    idx = np.empty(m, dtype=np.int64)
    for k in range(m - 1):
        i = members[k]
        idx[k] = i
        t[k] = D[lead, 0] * D[i, 0] + D[lead, 1] * D[i, 1]
    idx[m - 1] = p
    t[m - 1] = 0.0
    srt = np.argsort(t, kind="mergesort")
    total_p = 0.0
    total_n = 0.0
    for k in range(m):
        total_p += wpos[idx[k]]
        total_n += wneg[idx[k]]
    best = min(total_p, total_n)  # no cut: all one way
    best_c, best_up = 0, total_n <= total_p
    below_p = 0.0
    below_n = 0.0
    for c in range(1, m):
        i = idx[srt[c - 1]]
        below_p += wpos[i]
        below_n += wneg[i]
        up = below_p + (total_n - below_n)  # positive above the cut
        down = below_n + (total_p - below_p)  # positive below it
        if up < best:
            best, best_c, best_up = up, c, True
        if down < best:
            best, best_c, best_up = down, c, False
    if write:
        for c in range(m):
            i = idx[srt[c]]
            above = c >= best_c
            positive[i] = above if best_up else not above
    return best


@njit(cache=True, nogil=True)
def _sweep(Z, wpos, wneg, p, rtol, want, positive):
    """The best line through ``Z[p]``: ``(errors, leader)``, the leader a point of the line
    other than ``p``; with ``want >= 0``, the labeling of the line through ``Z[want]`` is
    written to ``positive``."""
    D, order, starts = _directions(Z, p, rtol)
    ng = starts.shape[0] - 1
    side = np.zeros(Z.shape[0], dtype=np.int8)
    # w[0]: the positive and negative weight on the side above the line, w[1] below it
    w = np.zeros((2, 2))
    # before the line reaches its direction a point lies on the side given by its offset
    # along that direction taken in [0, pi) (the line's, turning from angle 0 to pi);
    # turning past it moves it to the other
    for g in range(ng):
        lx, ly = _half_turn(D[order[starts[g]], 0], D[order[starts[g]], 1])
        for k in range(starts[g], starts[g + 1]):
            i = order[k]
            side[i] = 1 if lx * D[i, 0] + ly * D[i, 1] > 0 else -1
            _add(w, side[i], wpos[i], wneg[i], 1.0)
    best, best_lead = np.inf, -1
    for g in range(ng):
        lead = order[starts[g]]
        members = order[starts[g]:starts[g + 1]]
        for i in members:  # on the line
            _add(w, side[i], wpos[i], wneg[i], -1.0)
        up_errors, down_errors = w[0, 1] + w[1, 0], w[0, 0] + w[1, 1]
        here = want == lead
        value = min(up_errors, down_errors) + _on_line(D, members, lead, p, wpos, wneg,
                                                       positive, here)
        if value < best:
            best, best_lead = value, lead
        if here:
            for i in range(Z.shape[0]):
                if side[i] != 0 and not _member(members, i) and i != p:
                    positive[i] = (side[i] > 0) == (up_errors <= down_errors)
        for i in members:  # past the line: the other side
            side[i] = -side[i]
            _add(w, side[i], wpos[i], wneg[i], 1.0)
    return best, best_lead


@njit(cache=True, nogil=True)
def _add(w, side, wp, wn, sign):
    """Add (``sign = 1``) or take away (``-1``) a point's weights on its side."""
    k = 0 if side > 0 else 1
    w[k, 0] += sign * wp
    w[k, 1] += sign * wn


@njit(cache=True, nogil=True)
def _member(members, i):
    for j in members:
        if j == i:
            return True
    return False


@njit(cache=True, nogil=True, parallel=True)
def _all_sweeps(Z, wpos, wneg, rtol):
    """The best line through each point, the points shared among the threads."""
    n = Z.shape[0]
    values = np.empty(n)
    leads = np.empty(n, dtype=np.int64)
    unused = np.zeros(n, dtype=np.bool_)  # written only by a sweep asked for a labeling
    for p in prange(n):
        values[p], leads[p] = _sweep(Z, wpos, wneg, p, rtol, -1, unused)
    best_p = int(np.argmin(values))
    return values[best_p], best_p, leads[best_p]


def best_line(Z: np.ndarray, wpos: np.ndarray, wneg: np.ndarray) -> tuple[float, np.ndarray]:
    """The labeling of the distinct points ``Z`` (spanning the plane, in a well-conditioned
    frame) with the fewest weighted errors that a line realizes, and those errors.

    Examples
    --------
    >>> Z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])   # XOR
    >>> value, positive = best_line(Z, np.array([1, 0, 0, 1.0]), np.array([0, 1, 1, 0.0]))
    >>> value
    1.0
    """
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    wpos = np.ascontiguousarray(wpos, dtype=np.float64)
    wneg = np.ascontiguousarray(wneg, dtype=np.float64)
    value, p, lead = _all_sweeps(Z, wpos, wneg, COPLANAR_RTOL)
    positive = np.zeros(len(Z), dtype=bool)
    _sweep(Z, wpos, wneg, p, COPLANAR_RTOL, lead, positive)
    return float(value), positive
