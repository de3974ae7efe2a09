"""Exact minimization of the weighted 0-1 loss over affine classifiers (pure functions).

Problem: unique points ``z_i`` carry weights ``wpos_i`` (samples labeled positive) and
``wneg_i`` (labeled negative); find the labeling realizable by some affine classifier
``sign(a . z + b)`` (strictly: no point on the boundary) with the least weight of errors.

Why enumeration is exact (D = dimension of the points' affine hull, so that they span it):
the set of ``(a, b)`` realizing a given labeling is an open polyhedral cone whose closure is
pointed; one of its extreme rays is a hyperplane through D affinely independent points. Off
that hyperplane it agrees with the labeling; on it, the labeling restricted to the points of
the hyperplane is one realizable *within* the hyperplane, a (D - 1)-dimensional instance of
the same problem; and conversely every such combination is realizable (tilt the hyperplane
slightly by the in-plane separator). Hence

    OPT = min over planes P through D points, over orientations o:
          errors of o off P  +  OPT(points on P, in P's own coordinates).

When P holds exactly its D defining points (general position), the inner term is the sum of
``min(wpos_i, wneg_i)``: D affinely independent points are shattered within their plane.
Otherwise the inner problem is solved recursively, on the points projected onto P (in an
orthonormal basis of P, so the sub-problem has dimension at most D - 1 by construction, not
by a tolerance). A nested search that does not complete (deadline, Ctrl-C) makes the whole
search incomplete.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._backend import CPU, Backend
from .._certificate import StopReason
from .._combinatorics import MAX_RANK, n_combinations, unrank_combination
from .._fit_guard import off_main
from .._geometry import (
    COPLANAR_RTOL,
    affine_frame,
    homogeneous,
    leaf_sides,
    plane_coordinates,
)
from .._search import Candidate, ChunkResult, SearchStopped, run_search
from ._kernels_array import ice_scan_array
from ._kernels_cpu import ice_scan_cpu

__all__ = ["RATE", "Min01Result", "labeling_errors", "solve_min01", "search_size"]

#: candidates per second and core assumed wherever an enumeration is planned (a planning
#: figure: the real rate varies by an order of magnitude with how early the incumbent prunes)
RATE = 2e6

_PENDING_CAPACITY = 4096


@dataclass
class Min01Result:
    """Outcome of :func:`solve_min01`.

    ``positive[i]`` says whether point ``i`` is on the positive side; ``value`` is the weight
    of its errors; ``complete`` is True when the search covered every candidate (the value
    is then the optimum).
    """

    value: float
    positive: np.ndarray
    n_candidates: int
    complete: bool
    stop_reason: str | None
    improved: bool
    elapsed: float


def labeling_errors(positive: np.ndarray, wpos: np.ndarray, wneg: np.ndarray) -> float:
    """Weight of the errors of a labeling."""
    return float(np.sum(wneg[positive]) + np.sum(wpos[~positive]))


def majority_labeling(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
    """The best constant labeling (all positive, or all negative)."""
    return np.full(len(wpos), wneg.sum() <= wpos.sum())


def search_size(n_points: int, dim: int) -> int:
    """Number of candidate planes (D-subsets of the unique points)."""
    return n_combinations(n_points, dim)


class _Problem:
    """One exact search: the points in their frame, kernels, and the recursive sub-solves."""

    def __init__(self, Z, wpos, wneg, frame, backend: Backend, deadline: float | None = None):
        # Points are stored in a fixed pseudo-random order: the kernels scan them in index
        # order and stop early, which works far better than the sorted order of np.unique.
        # Ranks refer to this order, the same for every backend.
        self.perm = np.random.default_rng(0).permutation(len(Z))
        self.frame = frame
        self.Zf = self.frame.transform(Z[self.perm])
        self.Xh = homogeneous(self.Zf)
        self.nrm = np.linalg.norm(self.Xh, axis=1)
        self.wpos = np.ascontiguousarray(wpos[self.perm], dtype=np.float64)
        self.wneg = np.ascontiguousarray(wneg[self.perm], dtype=np.float64)
        self.n, self.dim = self.Zf.shape
        self.backend = backend
        self.deadline = deadline  # time.perf_counter() value after which nested searches stop
        self.cuda = None
        if backend.cuda:
            # imported here: numba.cuda is loaded only by searches that run on the GPU
            from ._kernels_cuda import MAX_DIM, IceScanCuda
            if self.dim <= MAX_DIM:
                self.cuda = IceScanCuda(self.Xh, self.nrm, self.wpos, self.wneg, COPLANAR_RTOL)

    # -- kernels -----------------------------------------------------------------------------
    def scan(self, r0: int, r1: int, ub_lt: float, ub_le: float) -> ChunkResult:
        if self.cuda is not None:
            val, rank, orient, pending, r_stop = self.cuda.scan(r0, r1, ub_lt, ub_le)
        elif self.backend.array_generic:
            val, rank, orient, pending = ice_scan_array(
                self.backend.xp, self.Xh, self.nrm, self.wpos, self.wneg,
                r0, r1, ub_lt, ub_le, COPLANAR_RTOL,
            )
            r_stop = r1
        else:
            buf = np.empty((_PENDING_CAPACITY, 4))
            val, rank, orient, npend, r_stop = ice_scan_cpu(
                self.Xh, self.nrm, self.wpos, self.wneg,
                r0, r1, ub_lt, ub_le, COPLANAR_RTOL, buf,
            )
            pending = [tuple(row) for row in buf[:npend]]
        # the orientation is recomputed from the plane's sides in :meth:`labeling`
        best = Candidate(float(val), int(rank), None) if rank >= 0 else None
        return ChunkResult(best, pending, int(r_stop))

    def sides(self, rank: int) -> tuple[np.ndarray, np.ndarray]:
        combo = unrank_combination(rank, self.n, self.dim)
        # off the main thread: Ctrl-C there would surface from this kernel as a SystemError
        codes, ok = off_main(leaf_sides, self.Xh, self.nrm, combo, COPLANAR_RTOL)
        if not ok:  # pragma: no cover - the kernels never report dependent subsets
            raise RuntimeError(f"candidate {rank} does not define a hyperplane")
        return combo, codes

    def resolve(self, pending: Sequence[tuple], bound: float) -> list[Candidate]:
        """Exact values of degenerate planes (those that can reach ``bound``): recurse into
        the points on each plane, searching only for labelings that keep the total within
        ``bound``. Each plane is reported once (canonical basis), so nothing is cached.

        Raises :class:`SearchStopped` when a nested search stops early (deadline);
        ``KeyboardInterrupt`` propagates to the outermost search.
        """
        out = []
        for rank, ep, em, lower in pending:
            if lower > bound:
                continue
            time_limit = None
            if self.deadline is not None:
                time_limit = self.deadline - time.perf_counter()
                if time_limit <= 0:
                    raise SearchStopped(StopReason.TIME_LIMIT, out)
            rank = int(rank)
            combo, codes = self.sides(rank)
            on = np.flatnonzero(codes == 0)
            off = min(ep, em)
            sub = _solve(plane_coordinates(self.Zf, combo, on), self.wpos[on], self.wneg[on], CPU,
                         standardize=False, cap=bound - off, time_limit=time_limit,
                         catch_interrupt=False)
            if off + sub.value <= bound:
                out.append(Candidate(off + sub.value, rank, sub.positive))
            if not sub.complete:
                raise SearchStopped(sub.stop_reason or "incomplete", out)
        return out

    def labeling(self, cand: Candidate) -> np.ndarray:
        """The labeling of all points (in the caller's order) realized by a candidate plane:
        the better orientation off the plane (the positive side of :func:`leaf_sides` on
        ties, like the kernels), and on it the best labeling of its points (majority for
        free points)."""
        sub_positive = cand.payload
        _, codes = self.sides(cand.rank)
        above, below = codes > 0, codes < 0
        err_pos = self.wneg[above].sum() + self.wpos[below].sum()
        err_neg = self.wpos[above].sum() + self.wneg[below].sum()
        positive = codes > 0 if err_pos <= err_neg else codes < 0
        on = codes == 0
        if sub_positive is None:
            positive[on] = self.wpos[on] > self.wneg[on]
        else:
            positive[on] = sub_positive
        out = np.empty_like(positive)
        out[self.perm] = positive
        return out


def _solve(Z, wpos, wneg, backend: Backend, incumbent=None, standardize=True, **search_kw):
    """See :func:`solve_min01`; ``search_kw`` go to :func:`run_search` (with ``cap``, the
    result is exact only if its value is at most ``cap``). ``standardize``: see
    :func:`exactclf._geometry.affine_frame`."""
    t0 = time.perf_counter()
    n = len(Z)
    if incumbent is None:
        incumbent = majority_labeling(wpos, wneg)
    ub = labeling_errors(incumbent, wpos, wneg)
    frame = affine_frame(Z, standardize=standardize)
    if frame.dim == 0:
        positive = np.full(n, wpos.sum() > wneg.sum())
        return Min01Result(labeling_errors(positive, wpos, wneg), positive, 0, True, None,
                           False, 0.0)
    time_limit = search_kw.get("time_limit")
    deadline = None if time_limit is None else t0 + time_limit
    prob = _Problem(Z, wpos, wneg, frame, backend, deadline)
    total = search_size(prob.n, prob.dim)
    if total > MAX_RANK:
        raise ValueError(f"search space of {total:.3g} candidates exceeds the rank range")
    out = run_search(total, prob.scan, prob.resolve, upper_bound=ub, **search_kw)
    if out.best is None:
        positive, value = incumbent, ub
    else:
        positive = prob.labeling(out.best)
        value = labeling_errors(positive, wpos, wneg)
        # rounding of two sums of the weights: relative to their total, not to 1
        if not np.isclose(value, out.best.value, rtol=1e-12,
                          atol=1e-12 * float(wpos.sum() + wneg.sum())):
            raise RuntimeError(
                f"internal error: candidate {out.best.rank} reports {out.best.value} errors "
                f"but its labeling has {value}"
            )
    return Min01Result(value, positive, out.n_candidates, out.complete, out.stop_reason,
                       out.best is not None, out.elapsed)


def solve_min01(
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    *,
    incumbent: np.ndarray | None = None,
    backend: Backend = CPU,
    max_candidates: int | None = None,
    time_limit: float | None = None,
    n_jobs: int | None = None,
    verbose: int = 0,
) -> Min01Result:
    """Minimize the weighted 0-1 loss of an affine classifier of the unique points ``Z``.

    Parameters
    ----------
    Z : (n, d) array of distinct points.
    wpos, wneg : (n,) weights of the positive / negative samples at each point.
    incumbent : (n,) bool array, optional
        A realizable labeling to beat (e.g. a surrogate classifier's predictions); only
        strictly better labelings replace it. Defaults to the best constant labeling.
    backend : Backend
        ``CPU`` (Numba kernel) or an array-generic backend (reference / GPU).
    max_candidates, time_limit, n_jobs, verbose
        See :func:`exactclf._search.run_search`.

    Returns
    -------
    Min01Result

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> res = solve_min01(Z, np.array([0, 1, 0, 1.0]), np.array([1, 0, 1, 0.0]))
    >>> res.value, res.complete
    (1.0, True)
    """
    return _solve(
        np.asarray(Z, dtype=np.float64), np.asarray(wpos, dtype=np.float64),
        np.asarray(wneg, dtype=np.float64), backend, incumbent,
        max_candidates=max_candidates, time_limit=time_limit, n_jobs=n_jobs, verbose=verbose,
        desc="ICE",
    )
