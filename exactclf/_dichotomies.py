"""Dichotomies of a point set: the subsets an affine classifier can put on its positive side.

The same fact that makes ICE exact describes them all: the closure of the cone of classifiers
realizing a subset ``F`` has an extreme ray, a hyperplane through D affinely independent
points (D = affine dimension); off that hyperplane ``F`` agrees with one of its sides, and on
it ``F`` is a dichotomy of the hyperplane's points within the hyperplane (one dimension down).
So every strictly realizable subset is ``side(P, o) | L`` for a hyperplane ``P`` through D
points (its canonical basis, :func:`exactclf._geometry.is_canonical_basis`), an orientation
``o`` and a dichotomy ``L`` of the points on ``P``; D points in general position in their
hyperplane are shattered (all ``2**D`` subsets).
"""

from __future__ import annotations

import itertools

import numpy as np

from ._combinatorics import n_combinations, unrank_batch
from ._geometry import (
    COPLANAR_RTOL,
    affine_frame,
    homogeneous,
    is_canonical_basis,
    leaf_sides,
)

__all__ = ["hyperplanes", "dichotomies", "dominant_dichotomies"]


def hyperplanes(Z: np.ndarray, max_subsets: int | None = None):
    """Yield ``(combo, codes)`` for every hyperplane through D of the points ``Z`` (each
    hyperplane once, for its canonical basis); ``codes`` in {+1, -1, 0} (0: on it).
    ``max_subsets`` stops after that many D-subsets (lexicographic order).

    ``Z`` must span its space (``affine_frame(Z).dim == Z.shape[1]``); points are distinct.
    """
    n, d = Z.shape
    Xh = homogeneous(Z)
    nrm = np.linalg.norm(Xh, axis=1)
    total = n_combinations(n, d)
    if max_subsets is not None:
        total = min(total, max_subsets)
    for r0 in range(0, total, 1 << 14):
        for combo in unrank_batch(r0, min(1 << 14, total - r0), n, d):
            codes, ok = leaf_sides(Xh, nrm, combo, COPLANAR_RTOL)
            if not ok:
                continue
            on = np.flatnonzero(codes == 0)
            if len(on) > d and not is_canonical_basis(Xh, combo, on):
                continue
            yield combo, codes


def _as_matrix(subsets: set[bytes]) -> np.ndarray:
    return np.array([np.frombuffer(b, dtype=bool) for b in sorted(subsets)])


def _collect(Z: np.ndarray, free_subsets, out: set[bytes], max_subsets=None) -> set[bytes]:
    """Add ``side(P, o) | L`` to ``out`` for every hyperplane ``P`` of ``Z``, orientation
    ``o`` and ``L`` a dichotomy of the points on ``P``: all of them (recursively) when more
    than D points lie on ``P``, else the rows of ``free_subsets(on)``."""
    n = len(Z)
    Zf = affine_frame(Z).transform(Z)
    if Zf.shape[1] == 0:
        out.update((np.zeros(n, dtype=bool).tobytes(), np.ones(n, dtype=bool).tobytes()))
        return out
    for _, codes in hyperplanes(Zf, max_subsets):
        on = np.flatnonzero(codes == 0)
        sub = dichotomies(Zf[on]) if len(on) > Zf.shape[1] else free_subsets(on)
        for o in (1, -1):
            base = codes * o > 0
            for s in sub:
                lab = base.copy()
                lab[on] = s
                out.add(lab.tobytes())
    return out


def dichotomies(Z: np.ndarray) -> np.ndarray:
    """All subsets of the distinct points ``Z`` that an affine classifier puts strictly on
    its positive side, as a boolean matrix (one row per subset, no repeats).

    Examples
    --------
    >>> dichotomies(np.array([[0.0], [1.0], [2.0]])).shape   # 3 points on a line: 6 = 2 * 3
    (6, 3)
    """
    def shattered(on):
        return np.array(list(itertools.product([False, True], repeat=len(on))))

    return _as_matrix(_collect(Z, shattered, set()))


def dominant_dichotomies(
    Z: np.ndarray, want: np.ndarray, max_planes: int | None = None
) -> np.ndarray:
    """Realizable subsets that suffice for *unions* of subsets, as a boolean matrix.

    ``want[i]`` says point ``i`` is better inside the union than outside. For a hyperplane
    through exactly D points, the subset that puts those D points inside iff they are wanted
    dominates the other ``2**D - 1`` (a union containing any of them does at least as well
    with it), so only it is kept; hyperplanes through more points keep every dichotomy of
    their points. The empty and the full set are included. ``max_planes``: see
    :func:`hyperplanes` (``max_subsets``).
    """
    n = len(Z)
    everything = {np.zeros(n, dtype=bool).tobytes(), np.ones(n, dtype=bool).tobytes()}
    return _as_matrix(_collect(Z, lambda on: want[on][None, :], everything, max_planes))
