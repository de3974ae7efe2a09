"""Exact minimum 0-1 loss of unions of K half-spaces (two-layer maxout networks).

The network predicts the "union" class where ``max_k (w_k . x + b_k) > 0``: the union class
region is a union of K open half-spaces, so the labelings it realizes are exactly the unions
of K realizable subsets (:mod:`exactclf._dichotomies`). For unions, each hyperplane through
D points in general position needs only one dichotomy of its D points (those that want to be
in the union, inside), so the candidate family is about twice the number of hyperplanes; the
search over K-tuples of candidates runs in :mod:`exactclf._backend._cpu_union`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._backend import CPU, Backend
from .._backend._array_union import union_search_array
from .._backend._cpu_union import union_search_cpu
from .._combinatorics import n_combinations
from .._dichotomies import dominant_dichotomies
from .._geometry import affine_frame
from .._search import Candidate, ChunkResult, run_search

__all__ = ["UnionResult", "bitset_kernel_args", "candidate_family", "exact_union",
           "union_errors"]


@dataclass
class UnionResult:
    """``sets[k]`` is the k-th half-space's subset of points; ``value`` the weighted errors
    of their union (as the ``want`` class) against ``want_w`` / ``other_w``."""

    value: float
    sets: np.ndarray
    n_evaluated: int
    complete: bool
    stop_reason: str | None


def union_errors(sets: np.ndarray, want_w: np.ndarray, other_w: np.ndarray) -> float:
    inside = sets.any(axis=0)
    return float(other_w[inside].sum() + want_w[~inside].sum())


def _pack(rows: np.ndarray, n_words: int) -> np.ndarray:
    """Boolean rows (m, n) -> little-endian uint64 bitsets (m, n_words)."""
    padded = np.zeros((rows.shape[0], n_words * 64), dtype=bool)
    padded[:, : rows.shape[1]] = rows
    return np.ascontiguousarray(np.packbits(padded, axis=1, bitorder="little").view("<u8"))


def _bit_slices(weights: np.ndarray, n_words: int) -> np.ndarray:
    """Integer weights as bit-sliced masks of shape (levels, n_words)."""
    w = weights.astype(np.int64)
    levels = max(1, int(w.max()).bit_length())
    return _pack(((w[None, :] >> np.arange(levels)[:, None]) & 1).astype(bool), n_words)


def candidate_family(U, want_w, other_w, max_planes=None):
    """The dominant realizable subsets of ``U`` (:func:`dominant_dichotomies`) sorted by
    the unwanted weight they cover (ties in their own order): ``(family, cover)``."""
    family = dominant_dichotomies(U, want_w > other_w, max_planes=max_planes)
    cover = family.astype(np.float64) @ other_w
    order = np.lexsort((np.arange(len(family)), cover))
    return family[order], np.ascontiguousarray(cover[order])


def bitset_kernel_args(family, cover, want_w, other_w):
    """The leading arguments of :func:`union_search_cpu` for a sorted family:
    ``(S, cover, gain, want_masks, other_masks)``."""
    n_words = (family.shape[1] + 63) // 64
    gain = (family.astype(np.float64) @ want_w).astype(np.int64)
    return (_pack(family, n_words), cover, gain, _bit_slices(want_w, n_words),
            _bit_slices(other_w, n_words))


def exact_union(
    U: np.ndarray,
    want_w: np.ndarray,
    other_w: np.ndarray,
    K: int,
    *,
    max_planes: int | None = None,
    backend: Backend = CPU,
    upper_bound: float = np.inf,
    time_limit: float | None = None,
    n_jobs: int | None = None,
    verbose: int = 0,
) -> UnionResult:
    """Best union of K realizable subsets of the distinct points ``U``.

    ``want_w[i]`` / ``other_w[i]``: integer weight of the samples at point ``i`` of the union
    class / of the other class. ``max_planes`` keeps only the hyperplanes through the first
    ``max_planes`` D-subsets (lexicographic order): the result is then the best union of
    that family only (``complete=False``). ``backend``: ``CPU`` (the Numba bitset kernel) or
    an array-generic backend (the reference on NumPy, the GPU path on CuPy); all return the
    same subsets. ``upper_bound``: only unions with fewer errors are searched for; when there
    is none (or the time limit strikes first), the better of the empty and the full set is
    returned, and ``complete`` then proves that no union errs less than ``upper_bound``.
    """
    if np.any(want_w % 1) or np.any(other_w % 1):
        raise ValueError("the exact maxout search needs integer sample weights")
    family, cover = candidate_family(U, want_w, other_w, max_planes)
    truncated = (max_planes is not None
                 and max_planes < n_combinations(len(U), affine_frame(U).dim))
    if backend.array_generic:
        F = backend.xp.asarray(family.astype(np.float64))

        def kernel(r0, r1, ub_lt, ub_le):
            return union_search_array(backend.xp, F, cover, want_w, other_w, K, r0, r1,
                                      ub_lt, ub_le)
    else:
        args = bitset_kernel_args(family, cover, want_w, other_w)

        def kernel(r0, r1, ub_lt, ub_le):
            return union_search_cpu(*args, K, r0, r1, ub_lt, ub_le)

    evaluated = []

    def scan(r0, r1, ub_lt, ub_le):
        val, idx, n_eval = kernel(r0, r1, ub_lt, ub_le)
        evaluated.append(n_eval)
        best = Candidate(float(val), int(idx[0]), idx.copy()) if idx[0] >= 0 else None
        return ChunkResult(best, [], r1)

    out = run_search(len(family), scan, lambda pending, bound: [], upper_bound=upper_bound,
                     time_limit=time_limit, n_jobs=n_jobs, verbose=verbose,
                     desc="Deep-ICE", chunk_size=64)
    if out.best is None:  # nothing below upper_bound, or no chunk ran: the best constant
        ends = [int(np.flatnonzero(~family.any(axis=1))[0]),
                int(np.flatnonzero(family.all(axis=1))[0])]
        errs = [union_errors(family[[e]], want_w, other_w) for e in ends]
        out.best = Candidate(min(errs), -1, np.full(K, ends[int(np.argmin(errs))]))
    sets = family[out.best.payload]
    value = union_errors(sets, want_w, other_w)
    assert value == out.best.value, (value, out.best.value)
    return UnionResult(value, sets, int(sum(evaluated)), out.complete and not truncated,
                       out.stop_reason or ("max_candidates" if truncated else None))
