"""Dichotomies of a point set: the subsets an affine classifier can put on its positive side.

The same fact that makes ICE exact describes them all: the closure of the cone of classifiers
realizing a subset ``F`` has an extreme ray, a hyperplane through D affinely independent
points (D = affine dimension); off that hyperplane ``F`` agrees with one of its sides, and on
it ``F`` is a dichotomy of the hyperplane's points within the hyperplane (one dimension down).
So every strictly realizable subset is ``side(P, o) | L`` for a hyperplane ``P`` through D
points (its canonical basis, :func:`exactclf._geometry.is_canonical_basis`), an orientation
``o`` and a dichotomy ``L`` of the points on ``P``; D points in general position in their
hyperplane are shattered (all ``2**D`` subsets).

Planes are processed in batches of D-subsets: one parallel Numba pass computes every point's
side of every plane of the batch, planes through exactly D points (general position) are
expanded to their subsets with array operations, and only planes through more points (which
need the canonical-basis test and a recursion one dimension down) are handled one by one.
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from ._combinatorics import n_combinations, unrank_batch
from ._fit_guard import off_main
from ._geometry import (
    COPLANAR_RTOL,
    affine_frame,
    batch_leaf_sides,
    homogeneous,
    is_canonical_basis,
    plane_coordinates,
)

__all__ = ["hyperplanes", "dichotomies", "dominant_dichotomies"]

_BATCH = 1 << 13
#: planes through more than D points recursed into per call off the main thread: a few
#: tens of milliseconds, so that Ctrl-C waits at most that long for the helper
_DEGENERATE_CHUNK = 32


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
        codes, ok = off_main(batch_leaf_sides, Xh, nrm, combos, COPLANAR_RTOL)
        for j in np.flatnonzero(ok & (np.count_nonzero(codes == 0, axis=1) > d)):
            on = np.flatnonzero(codes[j] == 0)
            ok[j] = is_canonical_basis(Xh, combos[j], on)
        yield combos[ok], codes[ok]


def _unique_rows(blocks: list[np.ndarray], n: int) -> np.ndarray:
    packed = np.unique(np.concatenate([np.packbits(b, axis=1) for b in blocks]), axis=0)
    return np.unpackbits(packed, axis=1, count=n).astype(bool)


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
    Zf = affine_frame(Z, standardize=standardize).transform(Z)
    d = Zf.shape[1]
    if d == 0:
        return [np.zeros((1, n), dtype=bool), np.ones((1, n), dtype=bool)]
    if want is None:
        patterns = np.array(list(itertools.product([False, True], repeat=d)))
    blocks = []
    for combos, codes in hyperplanes(Zf, max_subsets):
        _check(deadline)
        on = codes == 0
        simple = np.count_nonzero(on, axis=1) == d
        for o in (1, -1):
            base = codes[simple] * o > 0
            if want is not None:
                blocks.append(base | (on[simple] & want))
            else:
                rows = np.repeat(base, len(patterns), axis=0)
                cols = np.repeat(combos[simple], len(patterns), axis=0)
                rows[np.arange(len(rows))[:, None], cols] = np.tile(patterns, (len(base), 1))
                blocks.append(rows)
        degenerate = np.flatnonzero(~simple)
        for k in range(0, len(degenerate), _DEGENERATE_CHUNK):
            # one hop off the main thread per chunk of recursions, not two per recursion
            blocks.extend(off_main(_on_planes, Zf, combos, codes, on,
                                   degenerate[k:k + _DEGENERATE_CHUNK], want, deadline))
    return blocks


def _on_planes(Zf, combos, codes, on, planes, want, deadline) -> list[np.ndarray]:
    """The blocks of :func:`_collect` for the ``planes`` (rows of ``combos``) through more
    than D points: degenerate data (discrete features) put many points on a plane, each such
    plane is a recursion, and their number is not bounded by the batches."""
    blocks = []
    for j in planes:
        _check(deadline)
        idx = np.flatnonzero(on[j])
        Zp = plane_coordinates(Zf, combos[j], idx)
        sub = (_unique_rows(_collect(Zp, None, standardize=False), len(idx))
               if want is None else _dominant(Zp, want[idx], standardize=False,
                                              deadline=deadline))
        for o in (1, -1):
            rows = np.repeat((codes[j] * o > 0)[None, :], len(sub), axis=0)
            rows[:, idx] = sub
            blocks.append(rows)
    return blocks


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
    return _unique_rows(ends + _collect(Z, want, max_planes, standardize, deadline), n)
