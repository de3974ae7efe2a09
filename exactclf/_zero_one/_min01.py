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
    row_coordinates,
)
from .._search import Candidate, ChunkResult, SearchStopped, run_search
from ._kernels_array import ice_scan_array
from ._kernels_cpu import ice_scan_cpu

__all__ = ["RATE", "Min01Result", "labeling_errors", "solve_min01", "solve_rows", "search_size"]

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
    """One exact search: the rows in their frame, kernels, and the recursive sub-solves.

    ``Xh`` holds the homogeneous rows: ``(z, 1)`` for the points of an affine problem
    (``affine=True``), any rows spanning their space otherwise (points at infinity among
    them, see :func:`solve_rows`). Only the sub-problems on a degenerate plane differ: an
    affine problem's are affine again, in the plane's own coordinates.
    """

    def __init__(self, Xh, wpos, wneg, backend: Backend, deadline: float | None = None,
                 affine: bool = True):
        # Points are stored in a fixed pseudo-random order: the kernels scan them in index
        # order and stop early, which works far better than the sorted order of np.unique.
        # Ranks refer to this order, the same for every backend.
        self.perm = np.random.default_rng(0).permutation(len(Xh))
        self.Xh = np.ascontiguousarray(Xh[self.perm], dtype=np.float64)
        self.affine = affine
        self.Zf = np.ascontiguousarray(self.Xh[:, :-1]) if affine else None
        self.nrm = np.linalg.norm(self.Xh, axis=1)
        self.wpos = np.ascontiguousarray(wpos[self.perm], dtype=np.float64)
        self.wneg = np.ascontiguousarray(wneg[self.perm], dtype=np.float64)
        self.n, self.dim = self.Xh.shape[0], self.Xh.shape[1] - 1
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
            sub = self._sub_solve(combo, on, cap=bound - off, time_limit=time_limit,
                                  catch_interrupt=False)
            if off + sub.value <= bound:
                out.append(Candidate(off + sub.value, rank, sub.positive))
            if not sub.complete:
                raise SearchStopped(sub.stop_reason or "incomplete", out)
        return out

    def _sub_solve(self, combo, on, **search_kw) -> Min01Result:
        """The best labeling of the rows ``on`` the plane through ``combo``, within it."""
        wpos, wneg = self.wpos[on], self.wneg[on]
        if self.affine:
            return _solve(plane_coordinates(self.Zf, combo, on), wpos, wneg, CPU,
                          standardize=False, **search_kw)
        return _solve_rows(row_coordinates(self.Xh, combo, on), wpos, wneg, CPU, **search_kw)

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
    n = len(Z)
    if incumbent is None:
        incumbent = majority_labeling(wpos, wneg)
    frame = affine_frame(Z, standardize=standardize)
    if frame.dim == 0:
        positive = np.full(n, wpos.sum() > wneg.sum())
        return Min01Result(labeling_errors(positive, wpos, wneg), positive, 0, True, None,
                           False, 0.0)
    return _search(homogeneous(frame.transform(Z)), wpos, wneg, backend, incumbent,
                   affine=True, **search_kw)


def _solve_rows(Xh, wpos, wneg, backend: Backend, incumbent=None, **search_kw):
    """See :func:`solve_rows`; ``search_kw`` as for :func:`_solve`. Without an
    ``incumbent`` (no labeling is known to be realizable) and nothing found within ``cap``,
    the value is infinite and ``positive`` None."""
    if Xh.shape[1] == 1:
        # one coordinate: the plane is the origin, and the two orientations are all there is
        up = Xh[:, 0] > 0
        err_up, err_down = labeling_errors(up, wpos, wneg), labeling_errors(~up, wpos, wneg)
        positive = up if err_up <= err_down else ~up
        return Min01Result(min(err_up, err_down), positive, 0, True, None, False, 0.0)
    return _search(Xh, wpos, wneg, backend, incumbent, affine=False, **search_kw)


def _search(Xh, wpos, wneg, backend: Backend, incumbent, affine: bool, **search_kw):
    """The enumeration over the rows ``Xh`` (full rank), from ``incumbent`` (or none)."""
    ub = np.inf if incumbent is None else labeling_errors(incumbent, wpos, wneg)
    time_limit = search_kw.get("time_limit")
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    prob = _Problem(Xh, wpos, wneg, backend, deadline, affine)
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


def solve_rows(
    Xh: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    incumbent: np.ndarray,
    *,
    max_candidates: int | None = None,
    time_limit: float | None = None,
    n_jobs: int | None = None,
    verbose: int = 0,
) -> Min01Result:
    """Minimize the weighted errors of ``sign(theta . r)`` over the rows ``r`` of ``Xh``.

    The linear form of :func:`solve_min01`: its rows are the points ``(z, 1)``; here they
    may also be points at infinity ``(u, 0)``, which a classifier of the points ``z`` must
    put on its positive side when ``u`` carries a positive weight far above the points'
    (a sign constraint on the coefficients, see :mod:`exactclf._zero_one._signs`). The
    same enumeration is exact for any nonzero rows that span their space: the labelings
    realized by some ``theta`` form open polyhedral cones with a pointed closure, whose
    extreme rays are the planes through ``D`` independent rows (``D + 1`` columns), and the
    labeling of the rows on such a plane is a sub-problem of the same kind one dimension
    down.

    Parameters
    ----------
    Xh : (n, D + 1) array of rows spanning ``R^(D + 1)``.
    wpos, wneg : (n,) weights of the positive / negative side's errors at each row.
    incumbent : (n,) bool array
        A labeling known to be realizable; only strictly better labelings replace it.
    max_candidates, time_limit, n_jobs, verbose
        See :func:`exactclf._search.run_search`.

    Returns
    -------
    Min01Result

    Examples
    --------
    Points on a line, and the constraint that the slope be negative (a row at infinity
    ``(-1, 0)`` of weight 10 to be kept positive):

    >>> Xh = np.array([[0.0, 1], [1, 1], [2, 1], [3, 1], [-1, 0]])
    >>> wpos, wneg = np.array([0, 0, 1, 1, 10.0]), np.array([1, 1, 0, 0, 0.0])
    >>> start = np.array([True, True, True, True, True])
    >>> solve_rows(Xh, wpos, wneg, start).value
    2.0
    """
    return _solve_rows(
        np.asarray(Xh, dtype=np.float64), np.asarray(wpos, dtype=np.float64),
        np.asarray(wneg, dtype=np.float64), CPU, np.asarray(incumbent, dtype=bool),
        max_candidates=max_candidates, time_limit=time_limit, n_jobs=n_jobs,
        verbose=verbose, desc="ICE (sign constraints)",
    )
