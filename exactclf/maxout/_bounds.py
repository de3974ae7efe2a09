"""Proven lower bounds on the errors of unions of K half-spaces (two-layer maxout networks).

Partition bound: for any partition of the points into blocks, a network's errors are the sum
of its errors on the blocks, each at least that block's exact optimum, so the sum of the
blocks' exact optima bounds the optimum of all the points from below. A block whose exact
search does not complete counts only with its conflicting duplicates (``min(want, other)`` at
each point, which no classifier avoids), never with the best union its search found.

Blocks of nearby points bound best: classes that overlap in a region force errors in the
block that holds the region, while a random block of scattered points is easy to fit. The
blocks here are cells of a grid along random directions of the (standardized) points: sort
along one direction into slabs, each slab along a second direction into cells, all of about
the same number of points. Several grids are tried, with growing blocks while the budget
lasts, and the best sum is kept.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .._certificate import StopReason
from .._combinatorics import n_combinations
from .._geometry import affine_frame
from .._warnings import warn
from ..linear._bounds import LowerBound, conflict_bound
from ._exact import exact_union, union_on

__all__ = ["PLANE_RATE", "PartitionBound", "partition_bound", "spatial_blocks"]

#: candidate K-tuples (before pruning) of one block's exact search, at the first block size
_FIRST_BLOCK_TUPLES = 2e7
#: growth of the block size from one partition to the next, when the next partition's
#: predicted time fits: a partition's time grows about like ``size ** (K * dim / 2)``
#: (measured with the heuristic's cap on each block; pruning keeps it far below the
#: ``size ** (K * dim - 1)`` of the K-tuples)
_GROWTH = 1.4
#: a block search may take this many times its predicted time (at least
#: ``_MIN_BLOCK_SECONDS``) before it is stopped and the blocks shrink back: the prediction
#: from smaller blocks can be far off when the cap prunes less
_BLOCK_SLACK = 4.0
_MIN_BLOCK_SECONDS = 0.5
#: hyperplanes the candidate family enumeration settles per second (measured on 2-D and
#: 3-D data, see benchmarks/results/deepice_vs_baselines.txt): a block whose family alone
#: would outlast the budget is not started
PLANE_RATE = 1.5e4
#: and at most (larger blocks are tried while the budget lasts)
_MAX_BLOCK_TUPLES = 1e10


@dataclass
class PartitionBound(LowerBound):
    """A :class:`~exactclf.linear._bounds.LowerBound` on one polarity's optimum
    (``method``: ``"conflicting duplicates"``, ``"partition"`` or ``"exact"``) with where a
    later call of :func:`partition_bound` goes on: the block size ``size`` and the predicted
    seconds of one of its block searches."""

    size: int = 0
    block_seconds: float = math.inf


def spatial_blocks(Z: np.ndarray, size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """A partition of the rows of ``Z`` into blocks of about ``size`` nearby points: slabs
    along a random direction, each cut into cells along a second one (in 1-D, intervals)."""
    n, d = Z.shape
    n_blocks = max(1, math.ceil(n / size))
    u = rng.normal(size=d)
    order = np.argsort(Z @ u, kind="stable")
    if d < 2 or n_blocks < 4:
        return np.array_split(order, n_blocks)
    n_slabs = max(1, round(math.sqrt(n_blocks)))
    v = rng.normal(size=d)
    v -= (v @ u) / (u @ u) * u  # across the slabs
    blocks = []
    for slab, k in zip(np.array_split(order, n_slabs),
                       np.array_split(np.arange(n_blocks), n_slabs), strict=True):
        cells = slab[np.argsort(Z[slab] @ v, kind="stable")]
        blocks.extend(np.array_split(cells, max(1, len(k))))
    return [b for b in blocks if len(b)]


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


def _partition_sum(Z, want_w, other_w, K, blocks, inside, *, beat, target, deadline,
                   block_seconds, dim) -> tuple[float, int, int, bool]:
    """One partition's bound: the sum of its blocks' proven optima, the blocks searched and
    solved, and whether Ctrl-C stopped a block search.

    A block not solved counts with its conflicting duplicates, as do the blocks after the
    sum proves ``target``, after the ``deadline`` (a ``time.perf_counter()`` value) or a
    block whose family alone would outlast it. ``inside`` (a network's union, or None)
    caps each block's search at that network's errors there, plus one, and gives ``-inf``
    as soon as the sum can no longer exceed ``beat``.
    """
    total, solved, searched = 0.0, 0, 0
    # what each block can still add at most (its optimum is at most the heuristic's
    # errors there): a partition that cannot beat the best sum is dropped early
    ceiling = ([float(other_w[b][inside[b]].sum() + want_w[b][~inside[b]].sum())
                for b in blocks] if inside is not None else None)
    floor = [conflict_bound(want_w[b], other_w[b]).value for b in blocks]
    for k, block in enumerate(blocks):
        if ceiling is not None and total + sum(ceiling[k:]) <= beat:
            return -np.inf, searched, solved, False
        left = deadline - time.perf_counter()
        # already a proof of the target, or out of time: the rest count with their conflicts
        if (total + sum(floor[k:]) >= target or left <= 0
                or n_combinations(len(block), dim) > left * PLANE_RATE):
            return total + sum(floor[k:]), searched, solved, False
        # the heuristic's errors on the block, plus one: a cap that keeps the optimum
        cap = np.inf if ceiling is None else ceiling[k] + 1
        res = exact_union(Z[block], want_w[block], other_w[block], K, upper_bound=cap,
                          time_limit=min(left, max(_MIN_BLOCK_SECONDS,
                                                   _BLOCK_SLACK * block_seconds)))
        searched += 1
        if res.complete:
            total += min(res.value, cap)
            solved += 1
        else:
            total += floor[k]
        if res.stop_reason == StopReason.INTERRUPTED:
            return total + sum(floor[k + 1:]), searched, solved, True
    return total, searched, solved, False


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
        cap the block's search, which then proves the block's optimum sooner.
    random_state : int, Generator or None
        Seeds the grid directions.
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
        best = start
    n = len(Z)
    dim = affine_frame(Z).dim if n > 1 else 0
    if n <= 1 or dim == 0:  # one distinct point (or none): conflicts are the optimum
        best.method = "exact" if n <= 1 else best.method
        return best
    m = block_size or max(_first_size(n, dim, K, _FIRST_BLOCK_TUPLES),
                          0 if start is None else start.size)
    block_seconds = math.inf if block_size or start is None else start.block_seconds
    inside = union_on(Z, planes) if planes else None
    n_partitions = 0
    try:
        while True:
            tp = time.perf_counter()
            blocks = spatial_blocks(Z, m, rng)
            total, searched, solved, interrupted = _partition_sum(
                Z, want_w, other_w, K, blocks, inside, beat=best.value, target=target,
                deadline=t0 + time_limit, block_seconds=block_seconds, dim=dim)
            best.interrupted = best.interrupted or interrupted
            whole = len(blocks) == 1 == solved  # the exact optimum itself
            if total > best.value or (whole and total >= best.value):
                best = PartitionBound(total, "exact" if whole else "partition",
                                      interrupted=best.interrupted)
            n_partitions += 1
            # larger blocks bound better: grow while the next partition is predicted to fit,
            # else try another grid of the same size
            # (a block's time grows about like size ** (K * dim / 2 + 1): extrapolated from
            # the blocks searched, as a partition stopped by a target or a ceiling searched
            # only some; a block search stopped by its time shrinks the blocks back)
            grown = min(n, int(m * _GROWTH) + 1)
            left = time_limit - (time.perf_counter() - t0)
            if searched and searched == solved:
                per_block = (time.perf_counter() - tp) / searched
                at_grown = per_block * (grown / m) ** (K * dim / 2 + 1)
                if (m < n and _log_tuples(grown, dim, K) <= math.log10(_MAX_BLOCK_TUPLES)
                        and at_grown * math.ceil(n / grown) <= left):
                    m, block_seconds = grown, at_grown
                else:
                    block_seconds = per_block
            elif searched > solved and left > 0:
                m, block_seconds = max(dim + 2, int(m / _GROWTH)), math.inf
            best.size, best.block_seconds = m, block_seconds  # where a later call goes on
            if (best.interrupted or best.value >= target or best.method == "exact"
                    or n_partitions == max_partitions
                    or (len(blocks) == 1 and m >= n)  # the same partition every time
                    or time.perf_counter() - t0 >= time_limit):
                return best
    except KeyboardInterrupt:  # between block searches: what is proven stands
        warn("Deep-ICE partition bound interrupted: returning the bound proven so "
             "far", RuntimeWarning)
        best.interrupted = True
        return best
