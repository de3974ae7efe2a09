"""Proven lower bounds on the errors of unions of K half-spaces (two-layer maxout networks).

Partition bound: for any partition of the points into blocks, a network's errors are the sum
of its errors on the blocks, each at least that block's exact optimum, so the sum of the
blocks' exact optima bounds the optimum of all the points from below. A block whose exact
search does not complete counts only with its conflicting duplicates (``min(want, other)`` at
each point, which no classifier avoids), never with the best union its search found.

Blocks of nearby points bound best: classes that overlap in a region force errors in the
block that holds the region, while a random block of scattered points is easy to fit. The
blocks here are either cells of a grid along random directions of the (standardized) points
(:func:`~exactclf._partition.spatial_blocks`) or, given a network, balls grown around its
errors (:func:`~exactclf._partition.error_blocks`), a random choice per partition. Several
partitions are tried, with growing blocks while the budget lasts, and the best sum is kept;
a partition's blocks are searched in parallel (:func:`~exactclf._partition.solve_blocks`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from .._certificate import BoundMethod, StopReason
from .._combinatorics import n_combinations
from .._geometry import affine_frame
from .._partition import error_blocks, solve_blocks, spatial_blocks
from .._resources import effective_workers, fits_memory
from .._warnings import warn
from .._zero_one._bounds import LowerBound, conflict_bound
from ._exact import exact_union, family_bytes, union_on

__all__ = ["PLANE_RATE", "PartitionBound", "level_rows", "partition_bound", "spatial_blocks"]

#: candidate K-tuples (before pruning) of one block's exact search, at the first block size
_FIRST_BLOCK_TUPLES = 2e7
#: growth of the block size from one partition to the next, when the next partition's
#: predicted time fits: a block's time grows at least like ``size ** (K * dim / 2 + 1)``
#: (measured with the heuristic's cap on each block; pruning keeps it far below the
#: ``size ** (K * dim - 1)`` of the K-tuples), faster where the blocks' timings say so
_GROWTH = 1.4
#: block searches shorter than this are mostly fixed costs (a worker's start, the family's
#: set-up): their timings do not say how the time grows with the size
_MIN_TIMED_SECONDS = 0.2
#: a block search may take this many times its predicted time (at least
#: ``_MIN_BLOCK_SECONDS``) before it is stopped and the blocks shrink back: the prediction
#: from smaller blocks can be far off when the cap prunes less
_BLOCK_SLACK = 4.0
_MIN_BLOCK_SECONDS = 0.5
#: hyperplanes the candidate family enumeration settles per second, about half the slowest
#: rate measured (9e4 to 1e7 on Gaussian and integer data in 3 to 7 dimensions, see
#: benchmarks/results/deepice_vs_baselines.txt): before any block is timed, a block whose
#: family alone would outlast the time left is not started
PLANE_RATE = 5e4


@dataclass
class PartitionBound(LowerBound):
    """A :class:`~exactclf._zero_one._bounds.LowerBound` on one polarity's optimum
    (``method``: ``"conflicting duplicates"``, ``"partition"`` or ``"exact"``) with where a
    later call of :func:`partition_bound` goes on: the block size ``size``, the predicted
    seconds of one of its block searches, and the measured seconds of a block search at
    each size where every block searched completed (``timings``), and the blocks of the
    last call whose proven bound exceeds their conflicting duplicates, with that bound
    (``blocks``: ``(indices, bound)``, rows of :func:`~._joint.joint_cover_bound`)."""

    size: int = 0
    block_seconds: float = math.inf
    timings: dict[int, float] = field(default_factory=dict)
    blocks: list = field(default_factory=list)


def _log_tuples(m: int, dim: int, K: int) -> float:
    """log10 of the K-tuples of candidate half-spaces of ``m`` points in ``dim``-D."""
    subsets = 2 * n_combinations(m, dim) + 2
    return (math.lgamma(subsets + K) - math.lgamma(K + 1) - math.lgamma(subsets)) / math.log(10)


def _first_size(n: int, dim: int, K: int, limit: float) -> int:
    """The largest block size (at least ``dim + 2``) whose exact search has at most
    ``limit`` K-tuples before pruning."""
    m = dim + 2
    while m < n and _log_tuples(m + 1, dim, K) <= math.log10(limit):
        m += 1
    return min(m, n)


def _grown_seconds(K: int, dim: int, timings: dict[int, float], size: int,
                   grown: int) -> float:
    """Predicted seconds of a block search of ``grown`` points from the ``timings`` (seconds
    by block size) up to ``size``: the timing at ``size`` scaled as ``size ** e``, where
    ``e`` is at least ``K * dim / 2 + 1`` and more where the timings of the largest smaller
    size and of ``size`` (both long enough to mean something) say so; and at least the
    timing of that smaller size scaled at the least exponent (a block's time grows at least
    that fast: one quick partition, whose blocks the network's errors settled without a
    search, does not make the next size look cheap).

    Examples
    --------
    K = 2 in 3-D: the least exponent is 4. From 100 points to 150:

    >>> round(_grown_seconds(2, 3, {100: 1.0}, 100, 150), 2)
    5.06

    Timings that grew as ``size ** 7`` are extrapolated so:

    >>> _grown_seconds(2, 3, {50: 1.0, 100: 128.0}, 100, 200)
    16384.0

    Blocks of 150 took no longer than blocks of 100, whose time is then the floor:

    >>> _grown_seconds(2, 3, {100: 1.0, 150: 1.0}, 150, 200)
    16.0
    """
    least = K * dim / 2 + 1
    t = timings[size]
    smaller = [m for m in timings if m < size]
    if not smaller:
        return t * (grown / size) ** least
    m0 = max(smaller)
    t0 = timings[m0]
    exponent = least
    if min(t0, t) >= _MIN_TIMED_SECONDS:
        exponent = max(least, math.log(t / t0) / math.log(size / m0))
    seconds = t * (grown / size) ** exponent
    if t0 >= _MIN_TIMED_SECONDS:
        seconds = max(seconds, t0 * (grown / m0) ** least)
    return seconds


def _blocks_fit_memory(size: int, dim: int, parallel: int) -> bool:
    """Whether ``parallel`` block searches of ``size`` points in ``dim``-D can hold their
    candidate families at once (:func:`~exactclf._resources.fits_memory`)."""
    return fits_memory(parallel * family_bytes(size, n_combinations(size, dim)))


def _block_optimum(Z, want_w, other_w, K, cap, until) -> tuple[float, bool, bool]:
    """One block's proven bound (its optimum below ``cap`` if its search completes by
    ``until``, a ``time.time()`` value: a worker may start the block late; else its
    conflicting duplicates), whether it is the optimum, and whether Ctrl-C stopped the
    search (on a worker: the function joblib ships)."""
    seconds = until - time.time()
    if seconds <= 0:
        return conflict_bound(want_w, other_w).value, False, False
    res = exact_union(Z, want_w, other_w, K, upper_bound=cap, time_limit=seconds)
    if res.complete:
        return min(res.value, cap), True, False
    return (conflict_bound(want_w, other_w).value, False,
            res.stop_reason == StopReason.INTERRUPTED)


def _errors_on(block, inside, want_w, other_w) -> float:
    """The errors on ``block`` of the network whose union holds the points ``inside``."""
    return float(other_w[block][inside[block]].sum() + want_w[block][~inside[block]].sum())


@dataclass
class _Sums:
    """A partition's blocks as their searches come back: each block's proven bound (its
    conflicting duplicates until its search completes) and the counts of the blocks searched
    and solved (by a search, or without one where the network errs only on conflicts)."""

    bounds: list
    floor: list
    searched: int = 0
    solved: int = 0
    searched_solved: int = 0
    hopeless: bool = False  # the partition cannot beat the bound known
    interrupted: bool = False


def _partition_sum(Z, want_w, other_w, K, blocks, inside, *, beat, target, deadline,
                   block_seconds, dim, n_jobs=None) -> _Sums:
    """One partition's blocks searched on ``n_jobs`` workers (:class:`_Sums`).

    A block not solved counts with its conflicting duplicates, as do the blocks not started
    once the sum proves ``target``, after the ``deadline`` (a ``time.perf_counter()``
    value) or when a block's predicted time would outlast it (``block_seconds``, predicted
    from the blocks measured; inf before any, and then its family's size at
    :data:`PLANE_RATE`). ``inside`` (a network's union,
    or None) caps each block's search at that network's errors there, plus one, settles the
    blocks where it errs only on conflicting duplicates, and stops the partition
    (``hopeless``) as soon as its sum can no longer exceed ``beat``. Ctrl-C while the
    blocks are searched keeps what was proven (``interrupted``).
    """
    floor = [conflict_bound(want_w[b], other_w[b]).value for b in blocks]
    # what each block can still add at most (its optimum is at most the network's errors
    # there): a partition that cannot beat the best sum is dropped early
    ceiling = ([_errors_on(b, inside, want_w, other_w) for b in blocks]
               if inside is not None else None)
    sums = _Sums(list(floor), floor)
    done = [False] * len(blocks)

    def jobs():
        # read the results so far (possibly from joblib's dispatching thread) before each
        # block starts; the target and ``beat`` end a partition only once its outcome is
        # settled (the target reached; no better than the bound known), so whatever the
        # workers' order, the sum depends on timing only through the blocks a deadline cut
        for k, block in enumerate(blocks):
            if ceiling is not None and ceiling[k] <= floor[k]:  # the network's errors are
                done[k] = True  # the conflicts: the block's optimum, proven without a search
                sums.solved += 1
                continue
            if ceiling is not None and sum(sums.bounds[j] if done[j] else ceiling[j]
                                           for j in range(len(blocks))) <= beat:
                sums.hopeless = True
                return
            left = deadline - time.perf_counter()
            # the block's predicted time (from the blocks measured; before any, from its
            # family's size at the slowest enumeration rate known) must fit what is left
            expected = (block_seconds if math.isfinite(block_seconds)
                        else n_combinations(len(block), dim) / PLANE_RATE)
            if (sum(sums.bounds) >= target or left <= 0 or sums.interrupted
                    or expected > left):
                return
            # the network's errors on the block, plus one: a cap that keeps the optimum
            cap = np.inf if ceiling is None else ceiling[k] + 1
            sums.searched += 1
            seconds = min(left, max(_MIN_BLOCK_SECONDS, _BLOCK_SLACK * block_seconds))
            yield k, _block_optimum, (Z[block], want_w[block], other_w[block], K, cap,
                                      time.time() + seconds)

    try:
        for k, (value, complete, interrupted) in solve_blocks(jobs(), n_jobs):
            sums.bounds[k], done[k] = value, True
            sums.solved += complete
            sums.searched_solved += complete
            sums.interrupted = sums.interrupted or interrupted
    except KeyboardInterrupt:  # blocks still running count with their conflicts
        warn("Deep-ICE partition bound interrupted: returning the bound proven so far",
             RuntimeWarning)
        sums.interrupted = True
    return sums


def _draw_partition(Z, errors, size, rng) -> list:
    """A random partition of the points into blocks of about ``size`` points: with a
    network's ``errors`` (or None), half of the time (drawn from ``rng``) balls grown around
    them (:func:`~exactclf._partition.error_blocks`), else grid cells
    (:func:`~exactclf._partition.spatial_blocks`)."""
    if errors is not None and rng.random() < 0.5:
        return error_blocks(Z, errors, size, rng)
    return spatial_blocks(Z, size, rng)


def _with_partition(best: PartitionBound, blocks, sums: _Sums) -> PartitionBound:
    """``best`` after the partition ``blocks`` (searched as ``sums``): marked interrupted if
    the partition was, and replaced by the partition's sum where that is higher, or equal
    and the exact optimum itself (one block, solved); a hopeless partition sums to -inf."""
    total = -np.inf if sums.hopeless else float(sum(sums.bounds))
    best.interrupted = best.interrupted or sums.interrupted
    whole = len(blocks) == 1 == sums.solved  # the exact optimum itself
    if total > best.value or (whole and total >= best.value):
        return PartitionBound(total, BoundMethod.EXACT if whole else BoundMethod.PARTITION,
                              interrupted=best.interrupted)
    return best


@dataclass
class _BlockSizes:
    """Where :func:`partition_bound`'s partitions go: the block ``size``, the predicted
    seconds of one of its block searches (``block_seconds``) and the measured seconds of a
    block search by size (``timings``), for ``K`` half-spaces, ``n`` points in ``dim``-D and
    ``workers`` searching blocks in parallel."""

    K: int
    dim: int
    n: int
    workers: int
    size: int
    block_seconds: float
    timings: dict[int, float]

    @classmethod
    def first(cls, K, dim, n, workers, start, block_size) -> _BlockSizes:
        """The first partition's sizes: ``block_size`` if given (then not yet timed), else
        the larger of the default first size and ``start.size``, where ``start`` (a
        :class:`PartitionBound` or None) also gives the timings known."""
        size = block_size or max(_first_size(n, dim, K, _FIRST_BLOCK_TUPLES),
                                 0 if start is None else start.size)
        block_seconds = math.inf if block_size or start is None else start.block_seconds
        timings = {} if start is None else dict(start.timings)
        return cls(K, dim, n, workers, size, block_seconds, timings)

    def update(self, sums: _Sums, started: float, left: float) -> None:
        """The next partition's sizes after one partition (searched as ``sums``, started at
        ``started``, a ``time.perf_counter()`` value) with ``left`` seconds left.

        Larger blocks bound better: grow while the next partition is predicted to fit, else
        try another grid of the same size (a block's time extrapolated from the blocks
        searched, as a partition stopped by a target or a ceiling searched only some, with
        the exponent of :func:`_grown_seconds`; a block search stopped by its time shrinks
        the blocks back; the workers search ``min(workers, searched)`` blocks at a time, and
        the grown blocks' families must fit in memory together).
        """
        K, dim, n, workers, m = self.K, self.dim, self.n, self.workers, self.size
        grown = min(n, int(m * _GROWTH) + 1)
        searched = sums.searched
        if searched and searched == sums.searched_solved:
            per_block = ((time.perf_counter() - started) * min(workers, searched) / searched)
            self.timings[m] = per_block
            at_grown = _grown_seconds(K, dim, self.timings, m, grown)
            parallel = min(workers, math.ceil(n / grown))
            if (m < n and _blocks_fit_memory(grown, dim, parallel)
                    and at_grown * math.ceil(math.ceil(n / grown) / workers) <= left):
                self.size, self.block_seconds = grown, at_grown
            else:
                self.block_seconds = per_block
        elif searched > sums.searched_solved and left > 0:
            self.size, self.block_seconds = max(dim + 2, int(m / _GROWTH)), math.inf


def partition_bound(
    Z: np.ndarray,
    want_w: np.ndarray,
    other_w: np.ndarray,
    K: int,
    *,
    time_limit: float,
    planes=None,
    random_state: int | np.random.Generator | None = 0,
    start: PartitionBound | None = None,
    target: float = np.inf,
    block_size: int | None = None,
    max_partitions: int | None = None,
    n_jobs: int | None = None,
) -> PartitionBound:
    """The best partition bound (see the module docstring) found within ``time_limit``.

    Parameters
    ----------
    Z : (n, d) array of distinct points (in a well-conditioned frame).
    want_w, other_w : (n,) integer weights of the union class / of the other class.
    K : int
        Half-spaces of the networks bounded.
    time_limit : float
        Seconds for all partitions together; a block search still running at the end stops
        and counts with its conflicting duplicates.
    planes : list of (a, b), optional
        A network of this polarity (e.g. a heuristic's): its errors on a block, plus one,
        cap the block's search, which then proves the block's optimum sooner; half of the
        partitions (drawn at random) are grown around its errors.
    random_state : int, Generator or None
        Seeds the partitions: the same blocks whatever ``n_jobs``.
    start : PartitionBound, optional
        A bound already known (returned if no partition beats it); partitions start at its
        ``size`` (the first call: blocks whose search has about 2e7 K-tuples).
    target : float, default=inf
        Stop as soon as the bound reaches it (e.g. the errors of a known network).
    block_size : int, optional
        The first partition's block size (overrides the default and ``start.size``).
    max_partitions : int, optional
        Return after this many partitions (the result's ``size`` is where the next call
        goes on: grown when the next partition is predicted to fit in what is left of
        ``time_limit``).
    n_jobs : int, optional
        Workers searching a partition's blocks (joblib's convention; see
        :func:`~exactclf._partition.solve_blocks`).

    Returns
    -------
    PartitionBound
        ``interrupted`` when Ctrl-C stopped a block search (the bound is still valid).
    """
    t0 = time.perf_counter()
    rng = np.random.default_rng(random_state)
    conflicts = conflict_bound(want_w, other_w)
    best = PartitionBound(conflicts.value, conflicts.method)
    if start is not None and start.value > best.value:
        best = replace(start, blocks=[])
    n = len(Z)
    dim = affine_frame(Z).dim if n > 1 else 0
    if n <= 1 or dim == 0:  # one distinct point (or none): conflicts are the optimum
        best.method = BoundMethod.EXACT if n <= 1 else best.method
        return best
    sizes = _BlockSizes.first(K, dim, n, effective_workers(n_jobs), start, block_size)
    inside = union_on(Z, planes) if planes else None
    errors = (None if inside is None else
              np.where(inside, other_w, want_w) > np.minimum(want_w, other_w))
    n_partitions = 0
    solved = []  # the blocks proven above their conflicts, with their bounds
    try:
        while True:
            tp = time.perf_counter()
            blocks = _draw_partition(Z, errors, sizes.size, rng)
            sums = _partition_sum(
                Z, want_w, other_w, K, blocks, inside, beat=best.value, target=target,
                deadline=t0 + time_limit, block_seconds=sizes.block_seconds, dim=dim,
                n_jobs=n_jobs)
            solved.extend((b, v) for b, v, f in zip(blocks, sums.bounds, sums.floor, strict=True)
                          if v > f)
            best = _with_partition(best, blocks, sums)
            n_partitions += 1
            sizes.update(sums, tp, time_limit - (time.perf_counter() - t0))
            # where a later call goes on
            best.size, best.block_seconds, best.timings = (sizes.size, sizes.block_seconds,
                                                           sizes.timings)
            best.blocks = solved
            if (best.interrupted or best.value >= target or best.method == "exact"
                    or n_partitions == max_partitions
                    or (len(blocks) == 1 and sizes.size >= n)  # the same partition every time
                    or time.perf_counter() - t0 >= time_limit):
                return best
    except KeyboardInterrupt:  # between block searches: what is proven stands
        warn("Deep-ICE partition bound interrupted: returning the bound proven so "
             "far", RuntimeWarning)
        best.interrupted = True
        best.blocks = solved
        return best


def level_rows(Z, want_w, other_w, K, blocks, *, planes=None, time_limit: float,
               n_jobs=None) -> tuple[list, bool]:
    """Exact optima of the overlapping ``blocks`` of the points (e.g.
    :func:`~exactclf._partition.level_blocks`), cheapest search first, on ``n_jobs`` workers
    while ``time_limit`` lasts: the blocks proven above their conflicting duplicates, with
    their bounds (rows of :func:`~._joint.joint_cover_bound`), and whether Ctrl-C stopped
    them.

    A block's cost is its K-tuples of candidates (:func:`_log_tuples`) in the dimension of
    its own affine hull, which for points at one level of a feature is one less than the
    data's. ``planes`` (a network of this polarity) caps each search at its errors on the
    block, plus one, and skips the blocks where it errs only on conflicting duplicates.
    A block whose candidate family alone would outlast the time left is not started; one
    still running at the end is dropped.
    """
    deadline = time.time() + time_limit
    inside = union_on(Z, planes) if planes else None
    jobs_of = []
    for b in blocks:
        floor = conflict_bound(want_w[b], other_w[b]).value
        cap = np.inf if inside is None else _errors_on(b, inside, want_w, other_w) + 1
        if cap > floor + 1:
            dim = affine_frame(Z[b], standardize=False).dim
            jobs_of.append((_log_tuples(len(b), dim, K), dim, b, floor, cap))
    jobs_of.sort(key=lambda job: job[0])
    solved, interrupted = [], False

    def jobs():
        for k, (_, dim, b, _, cap) in enumerate(jobs_of):
            left = deadline - time.time()
            if left <= 0 or n_combinations(len(b), dim) > left * PLANE_RATE:
                return
            yield k, _block_optimum, (Z[b], want_w[b], other_w[b], K, cap, deadline)

    try:
        for k, (value, complete, stopped) in solve_blocks(jobs(), n_jobs):
            interrupted = interrupted or stopped
            if complete and value > jobs_of[k][3]:
                solved.append((jobs_of[k][2], value))
    except KeyboardInterrupt:
        warn("Deep-ICE level bound interrupted: returning the blocks proven so far",
             RuntimeWarning)
        interrupted = True
    return solved, interrupted
