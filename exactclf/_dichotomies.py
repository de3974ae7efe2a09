"""Dichotomies of a point set: the subsets an affine classifier can put on its positive side.

The same fact that makes ICE exact describes them all: the closure of the cone of classifiers
realizing a subset ``F`` has an extreme ray, a hyperplane through D affinely independent
points (D = affine dimension); off that hyperplane ``F`` agrees with one of its sides, and on
it ``F`` is a dichotomy of the hyperplane's points within the hyperplane (one dimension down).
So every strictly realizable subset is ``side(P, o) | L`` for a hyperplane ``P`` through D
points (its canonical basis, :func:`exactclf._geometry.is_canonical_basis`), an orientation
``o`` and a dichotomy ``L`` of the points on ``P``; D points in general position in their
hyperplane are shattered (all ``2**D`` subsets).

Planes are processed in batches of D-subsets: one Numba pass computes every point's side of
every plane of the batch (and keeps a plane through more than D points only for its canonical
basis), planes through exactly D points (general position) are expanded to their subsets with
array operations, and planes through more points recurse one dimension down: compiled, on bit
masks, for planes of at most 64 points and a bounded number of subsets (discrete features put
points on thousands of such planes), batched in Python like the top level for larger ones.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
from numba import njit
from scipy.special import comb

from ._combinatorics import advance_prefix, n_combinations, unrank_batch
from ._fit_guard import off_main
from ._geometry import (
    COPLANAR_RTOL,
    RANK_RTOL,
    affine_frame,
    batch_leaf_sides,
    canonical_on_levels,
    cross,
    homogeneous,
    make_levels,
    pivot,
    plane_coordinates,
    plane_coordinates_kernel,
    side_code,
    update_levels,
)

__all__ = ["hyperplanes", "dichotomies", "dominant_dichotomies"]

_BATCH = 1 << 13
#: planes through more than D points recursed into per call off the main thread: a few
#: milliseconds, at most a few tenths of a second on 7-D integer points, so that Ctrl-C
#: waits at most that long for the helper
_DEGENERATE_CHUNK = 32
#: a plane's points fit one bit mask in the compiled recursion
_MASK_BITS = 64
#: the compiled recursion takes a plane when its D-1-subsets number at most this: its
#: work is then bounded (no deadline check inside) and the Python recursion's overhead per
#: plane would dominate it
_COMPILED_PLANES = 4096


def hyperplanes(Z: np.ndarray, max_subsets: int | None = None):
    """Yield ``(combos, codes)`` batches covering every hyperplane through D of the points
    ``Z`` once (for its canonical basis): ``combos[j]`` the D defining points, ``codes[j, i]``
    in {+1, -1, 0} the side of point ``i`` (0: on the plane). ``max_subsets`` stops after that
    many D-subsets (lexicographic order).

    ``Z`` must span its space (``affine_frame(Z).dim == Z.shape[1]``); points are distinct.
    """
    n, d = Z.shape
    Xh = homogeneous(Z)
    nrm = np.linalg.norm(Xh, axis=1)
    total = n_combinations(n, d)
    if max_subsets is not None:
        total = min(total, max_subsets)
    for r0 in range(0, total, _BATCH):
        combos = unrank_batch(r0, min(_BATCH, total - r0), n, d)
        # off the main thread: Ctrl-C there would surface from this kernel as a SystemError
        codes, ok = off_main(batch_leaf_sides, Xh, nrm, combos, COPLANAR_RTOL, True)
        yield combos[ok], codes[ok]


def _unique_rows(blocks: list[np.ndarray], n: int, deadline: float | None = None) -> np.ndarray:
    """The distinct rows of the boolean ``blocks``, sorted as their packed bytes;
    ``TimeoutError`` past ``deadline`` (checked between the blocks and between the steps:
    on millions of rows each step takes seconds)."""
    packed = []
    for b in blocks:
        _check(deadline)
        packed.append(np.packbits(b, axis=1))
    packed = np.ascontiguousarray(np.concatenate(packed))
    # one opaque record per row: sorted by comparing bytes, several times faster than
    # np.unique(axis=0), which compares the columns one by one (the same order)
    rows = np.unique(packed.view(np.dtype((np.void, packed.shape[1]))).ravel())
    _check(deadline)
    # unpackbits gives 0/1 bytes: a view as booleans, not a copy
    return np.unpackbits(rows.view(np.uint8).reshape(-1, packed.shape[1]), axis=1,
                         count=n).view(bool)


def _collect(
    Z: np.ndarray, want: np.ndarray | None, max_subsets=None, standardize=True, deadline=None
) -> list[np.ndarray]:
    """Boolean blocks of ``side(P, o) | L`` for every hyperplane ``P`` of ``Z``, orientation
    ``o`` and dichotomy ``L`` of the points on ``P`` (recursively, on the points in ``P``'s
    own coordinates, when more than D points lie on ``P``; all ``2**D`` assignments when
    exactly D do). With ``want``, only the undominated ``L`` (see
    :func:`dominant_dichotomies`). ``standardize``: see :func:`affine_frame`. Raises
    ``TimeoutError`` once ``time.perf_counter()`` passes ``deadline``."""
    n = len(Z)
    Zf = np.ascontiguousarray(affine_frame(Z, standardize=standardize).transform(Z))
    d = Zf.shape[1]
    if d == 0:
        return [np.zeros((1, n), dtype=bool), np.ones((1, n), dtype=bool)]
    if want is None:
        patterns = np.array(list(itertools.product([False, True], repeat=d)))
    blocks = []
    for combos, codes in hyperplanes(Zf, max_subsets):
        _check(deadline)
        on = codes == 0
        n_on = np.count_nonzero(on, axis=1)
        simple = n_on == d
        for o in (1, -1):
            base = codes[simple] * o > 0
            if want is not None:
                blocks.append(base | (on[simple] & want))
            else:
                rows = np.repeat(base, len(patterns), axis=0)
                cols = np.repeat(combos[simple], len(patterns), axis=0)
                rows[np.arange(len(rows))[:, None], cols] = np.tile(patterns, (len(base), 1))
                blocks.append(rows)
        small = ~simple & (n_on <= _MASK_BITS) & (comb(n_on, d - 1) <= _COMPILED_PLANES)
        planes = np.flatnonzero(small)
        for k in range(0, len(planes), _DEGENERATE_CHUNK):
            _check(deadline)
            # compiled, off the main thread: Ctrl-C waits for one chunk at most
            blocks.append(off_main(
                _on_small_planes, Zf, combos, codes, planes[k:k + _DEGENERATE_CHUNK],
                np.zeros(n, dtype=bool) if want is None else want, want is not None))
        for j in np.flatnonzero(~simple & ~small):
            _check(deadline)
            blocks.extend(_on_plane(Zf, combos[j], codes[j], want, deadline))
    return blocks


def _on_plane(Zf, combo, codes, want, deadline) -> list[np.ndarray]:
    """The blocks of :func:`_collect` for one plane (its defining ``combo``) through many
    points: the recursion one dimension down, batched as at the top."""
    idx = np.flatnonzero(codes == 0)
    Zp = plane_coordinates(Zf, combo, idx)
    sub = (_unique_rows(_collect(Zp, None, standardize=False), len(idx))
           if want is None else _dominant(Zp, want[idx], standardize=False, deadline=deadline))
    blocks = []
    for o in (1, -1):
        rows = np.repeat((codes * o > 0)[None, :], len(sub), axis=0)
        rows[:, idx] = sub
        blocks.append(rows)
    return blocks


@njit(cache=True, nogil=True)
def _on_small_planes(Zf, combos, codes, planes, want, dominant):
    """The rows of :func:`_collect` for the ``planes`` (rows of ``combos``), each through more
    than D but at most :data:`_MASK_BITS` points: ``side(P, o) | L`` for each dichotomy ``L``
    of the points on ``P`` (the dominant ones if ``dominant``, else all) from
    :func:`_plane_masks`. Discrete features put points on many such planes, and in Python
    each one would cost a recursion's fixed overhead."""
    n = Zf.shape[0]
    blocks = [np.zeros((0, n), dtype=np.bool_)]
    for j in planes:
        on = np.flatnonzero(codes[j] == 0)
        sub = _plane_masks(plane_coordinates_kernel(Zf, combos[j], on), want[on], dominant)
        rows = np.empty((2 * sub.shape[0], n), dtype=np.bool_)
        for t in range(sub.shape[0]):
            rows[2 * t] = codes[j] > 0
            rows[2 * t + 1] = codes[j] < 0
            for b in range(on.shape[0]):
                inside = (sub[t] >> np.uint64(b)) & np.uint64(1) == np.uint64(1)
                rows[2 * t, on[b]] = inside
                rows[2 * t + 1, on[b]] = inside
        blocks.append(rows)
    return _stack(blocks)


@njit(cache=True, nogil=True)
def _plane_masks(P, want, dominant):  # noqa: C901 (compiled kernel)
    """The distinct dichotomies of the (at most 64) distinct points ``P``, given in an
    orthonormal frame of the plane they lie on, as bit masks (bit ``i``: point ``i``
    inside), sorted: :func:`_collect` one dimension down, recursively, in the frame of
    :func:`affine_frame` without standardization. With ``dominant`` only the undominated
    ones plus the empty and the full set, as :func:`dominant_dichotomies`.

    The planes are scanned as in the ICE kernel (levels shared by the subsets with a common
    prefix), with the decisions of :func:`leaf_sides`."""
    m = P.shape[0]
    one = np.uint64(1)
    full = np.uint64(0)
    for i in range(m):
        full |= one << np.uint64(i)
    ends = np.array([np.uint64(0), full])
    Z = _plane_frame(P)
    d = Z.shape[1]
    if d == 0:
        return ends
    Xh = np.ones((m, d + 1))
    Xh[:, :d] = Z
    tn = COPLANAR_RTOL * np.sqrt(np.sum(Xh * Xh, axis=1))
    Qb = make_levels(Xh)
    Q = Qb[max(d - 2, 0)]
    scratch = np.empty(d + 1)
    onp = np.empty(m, dtype=np.int64)
    masks = [ends if dominant else ends[:0]]
    c = np.arange(d)
    valid = 0
    while True:
        valid, dep_at = update_levels(Qb, c, valid, tn, scratch)
        if dep_at >= 0:  # the prefix c[:dep_at + 1] is affinely dependent: skip its subtree
            q = advance_prefix(c, dep_at, m, d)
            if q < 0:
                break
            valid = min(valid, q)
            continue
        a0, a1, a2 = pivot(Qb, c)
        na = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
        for k in range(c[d - 1], m):
            w0, w1, w2 = cross(a0, a1, a2, Q[k, 0], Q[k, 1], Q[k, 2])
            nw = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
            if nw <= na * tn[k]:
                continue
            c[d - 1] = k
            pos = np.uint64(0)
            neg = np.uint64(0)
            non = 0
            for i in range(m):
                sc = side_code(w0, w1, w2, nw, Q[i, 0], Q[i, 1], Q[i, 2], tn[i])
                member = False
                for j in range(d):
                    member |= c[j] == i
                if sc == 0 or member:
                    onp[non] = i
                    non += 1
                elif sc > 0:
                    pos |= one << np.uint64(i)
                else:
                    neg |= one << np.uint64(i)
            if non == d:
                sub = np.empty(1 if dominant else 1 << d, dtype=np.uint64)
                for t in range(sub.shape[0]):
                    sub[t] = 0
                    for b in range(d):
                        if want[c[b]] if dominant else (t >> b) & 1 == 1:
                            sub[t] |= one << np.uint64(b)
            elif canonical_on_levels(Qb, tn, c, k, a0, a1, a2, na, onp, non):
                on = onp[:non].copy()
                sub = _plane_masks(plane_coordinates_kernel(Z, c, on), want[on], dominant)
            else:
                continue
            for t in range(sub.shape[0]):
                inside = np.uint64(0)
                for b in range(non):
                    if (sub[t] >> np.uint64(b)) & one == one:
                        inside |= one << np.uint64(onp[b])
                masks.append(np.array([pos | inside, neg | inside]))
        if d == 1:
            break
        q = advance_prefix(c, d - 2, m, d)
        if q < 0:
            break
        valid = min(valid, q)
    return np.unique(_stack(masks))


@njit(cache=True, nogil=True)
def _stack(blocks):
    """The arrays ``blocks`` (one shape but the first axis) one after the other (Numba's
    ``np.concatenate`` takes tuples, not lists)."""
    total = 0
    for blk in blocks:
        total += blk.shape[0]
    out = np.empty((total,) + blocks[0].shape[1:], dtype=blocks[0].dtype)
    r = 0
    for blk in blocks:
        out[r:r + blk.shape[0]] = blk
        r += blk.shape[0]
    return out


@njit(cache=True, nogil=True)
def _plane_frame(P):
    """``affine_frame(P, standardize=False).transform(P)``: centered (on the lower median,
    then the mean), rank decided at :data:`RANK_RTOL`, unit RMS norm."""
    m, k = P.shape
    if m < 2 or k == 0:
        return np.zeros((m, 0))
    Xc = np.empty((m, k))
    for a in range(k):
        origin = np.sort(P[:, a])[(m - 1) // 2]
        Xc[:, a] = P[:, a] - origin
        big = np.max(np.abs(Xc[:, a]))
        big = big if big > 0 else 1.0
        Xc[:, a] -= np.mean(Xc[:, a] / big) * big
    _, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    if s[0] == 0:
        return np.zeros((m, 0))
    r = int(np.sum(s > RANK_RTOL * s[0]))
    Z = Xc @ np.ascontiguousarray(Vt[:r].T)
    norm = np.sqrt(np.sum(Z * Z) / m)
    return Z / norm if norm > 0 else Z


def dichotomies(Z: np.ndarray) -> np.ndarray:
    """All subsets of the distinct points ``Z`` that an affine classifier puts strictly on
    its positive side, as a boolean matrix (one row per subset, no repeats, rows sorted).

    Examples
    --------
    >>> dichotomies(np.array([[0.0], [1.0], [2.0]])).shape   # 3 points on a line: 6 = 2 * 3
    (6, 3)
    """
    return _unique_rows(_collect(Z, None), len(Z))


def _check(deadline: float | None) -> None:
    if deadline is not None and time.perf_counter() >= deadline:
        raise TimeoutError("the enumeration of dichotomies ran past its deadline")


def dominant_dichotomies(
    Z: np.ndarray, want: np.ndarray, max_planes: int | None = None,
    deadline: float | None = None,
) -> np.ndarray:
    """Realizable subsets that suffice for *unions* of subsets, as a boolean matrix.

    ``want[i]`` says point ``i`` is better inside the union than outside. For a hyperplane
    through exactly D points, the subset that puts those D points inside iff they are wanted
    dominates the other ``2**D - 1`` (a union containing any of them does at least as well
    with it), so only it is kept; hyperplanes through more points keep the dominant
    dichotomies of their points (the same rule one dimension down). So every realizable
    subset is dominated by (no better in any union than) a returned one. The empty and the
    full set are included. ``max_planes``: see :func:`hyperplanes` (``max_subsets``).
    ``deadline``: a ``time.perf_counter()`` value; past it, ``TimeoutError`` is raised.
    """
    return _dominant(Z, want, max_planes, deadline=deadline)


def _dominant(Z, want, max_planes=None, standardize=True, deadline=None):
    n = len(Z)
    ends = [np.zeros((1, n), dtype=bool), np.ones((1, n), dtype=bool)]
    return _unique_rows(ends + _collect(Z, want, max_planes, standardize, deadline), n,
                        deadline)
