"""Blocks of partition bounds (linear and maxout alike): where they are cut, and the
joblib workers that solve them.

A partition bound is a sum of exact optima of disjoint blocks of the points: any
classifier's errors split over the blocks, each at least its block's optimum. It loses what
no block sees whole: a group of points that no classifier gets all right (a conflict) but
whose points fall into different blocks. So blocks keep nearby points together
(:func:`spatial_blocks`) or are grown around a known classifier's errors
(:func:`error_blocks`), where the conflicts are. Where errors are spread through a large
data set, nearby points are nearly separable and such blocks prove little; random blocks
(:func:`random_blocks`), each a sample of the whole, then keep about the whole's error rate,
less what a small sample overfits: on such data they prove many times what blocks of nearby
points prove in the same time. A block on which that classifier errs no more than
the conflicting duplicates has exactly that optimum, without a search.

The blocks' searches are independent: :func:`solve_blocks` runs them on joblib workers,
processes unless ``joblib.parallel_config`` says otherwise (a Dask cluster with
``backend="dask"``): the numba kernels release the GIL, but at the sizes of blocks most of
a search's time goes to building its candidate family in NumPy and Python, which holds it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
from joblib import Parallel, delayed

from ._resources import effective_workers

__all__ = ["MAX_LEVELS", "MAX_LEVEL_ROWS", "error_blocks", "level_blocks", "merged_pairs",
           "random_blocks", "solve_blocks", "spatial_blocks"]

#: a feature with at most this many distinct values among the points is a *level* feature:
#: its values cut the points into parallel hyperplanes (see :func:`level_blocks`)
MAX_LEVELS = 16
#: the rows of all the blocks of :func:`level_blocks` together, at most (16 MB of indices)
MAX_LEVEL_ROWS = 2_000_000


def spatial_blocks(Z: np.ndarray, size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """A partition of the rows of ``Z`` into blocks of about ``size`` nearby points: slabs
    along a random direction, each cut into cells along a second one (in 1-D, intervals).

    Examples
    --------
    >>> Z = np.arange(10.0)[:, None]
    >>> [b.tolist() for b in spatial_blocks(Z, 5, np.random.default_rng(0))]
    [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    """
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


def random_blocks(n: int, size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """A partition of ``range(n)`` into blocks of about ``size`` indices drawn at random.

    Examples
    --------
    >>> [len(b) for b in random_blocks(10, 4, np.random.default_rng(0))]
    [4, 3, 3]
    """
    return np.array_split(rng.permutation(n), max(1, math.ceil(n / size)))


def merged_pairs(blocks: list[np.ndarray], bounds: list[float]) -> tuple[list[np.ndarray],
                                                                          list[float]]:
    """Consecutive blocks merged in pairs, each with the sum of its two parts' ``bounds``
    (a lower bound on the merged block's optimum: its parts partition it), so that a
    partition into the larger blocks proves at least as much even where some are not
    solved.

    Examples
    --------
    >>> blocks = [np.array([0, 1]), np.array([2]), np.array([3, 4])]
    >>> merged, floors = merged_pairs(blocks, [1.0, 0.0, 2.0])
    >>> [b.tolist() for b in merged], floors
    ([[0, 1, 2], [3, 4]], [1.0, 2.0])
    """
    merged = [np.concatenate(blocks[i:i + 2]) for i in range(0, len(blocks), 2)]
    floors = [float(sum(bounds[i:i + 2])) for i in range(0, len(blocks), 2)]
    return merged, floors


def error_blocks(Z: np.ndarray, errors: np.ndarray, size: int,
                 rng: np.random.Generator) -> list[np.ndarray]:
    """A partition of the rows of ``Z`` into blocks of at most ``size`` points grown around
    the rows where ``errors`` is True (a classifier's errors): in a random order, each of
    them not yet in a block starts one with the ``size`` points nearest to it that are not
    in one yet (itself first), so that errors close together, and the points around them
    that make them errors, share a block. The points left, near no error, are cut by
    :func:`spatial_blocks`.

    Examples
    --------
    >>> Z = np.arange(10.0)[:, None]
    >>> errors = np.zeros(10, dtype=bool)
    >>> errors[6] = True
    >>> [sorted(b.tolist()) for b in error_blocks(Z, errors, 3, np.random.default_rng(0))]
    [[5, 6, 7], [0, 1, 2], [3, 4], [8, 9]]
    """
    free = np.ones(len(Z), dtype=bool)
    blocks = []
    for e in rng.permutation(np.flatnonzero(errors)):
        if not free[e]:
            continue
        idx = np.flatnonzero(free)
        dist = ((Z[idx] - Z[e]) ** 2).sum(axis=1)
        if len(idx) > size:
            near = np.argpartition(dist, size - 1)[:size]
            near = near[np.argsort(dist[near], kind="stable")]
        else:
            near = np.argsort(dist, kind="stable")
        blocks.append(idx[near])
        free[idx[near]] = False
    rest = np.flatnonzero(free)
    if len(rest):
        blocks.extend(rest[b] for b in spatial_blocks(Z[rest], size, rng))
    return blocks


def level_blocks(U: np.ndarray, max_size: int | None = None, max_levels: int = MAX_LEVELS,
                 max_rows: int = MAX_LEVEL_ROWS) -> list[np.ndarray]:
    """Blocks of the rows of ``U`` (points in their original features) that lie on few
    parallel hyperplanes, of 3 to ``max_size`` rows (default: any; two distinct points are
    fit by any network), smallest first, each once, never all of the rows: for each *level* feature
    ``g`` (2 to ``max_levels`` distinct values), the rows whose value of ``g`` is in a
    window of consecutive levels, among all rows and among the rows at each level of
    another level feature. The blocks hold at most ``max_rows`` rows together (the smallest
    blocks kept: they are the ones whose search completes).

    Features with few values (sex, a count, a grade) are common in the data the exact
    methods serve. The rows at one level lie in a hyperplane, at one level of two features
    in a subspace of two dimensions fewer, so their exact search runs in fewer dimensions
    than a spatial block of the same size (its cost grows like ``size ** (K * dim)``), and a
    window of a few levels is a slab whose classes a network cannot fit independently level
    by level. The windows overlap: they are rows of a joint cover
    (:func:`~exactclf.maxout._joint.joint_cover_bound`), not a partition. Windows are
    sets of rows, so an affine change of a feature's units (one that reverses its order
    too) gives the same blocks.

    Examples
    --------
    Sex (2 values) and a grade (3 values) are level features, the last column is not:

    >>> U = np.array([[0, 1, 0.5], [0, 2, 1.5], [0, 3, 0.1], [1, 1, 2.5], [1, 3, 0.7],
    ...               [1, 2, 0.3]])
    >>> [b.tolist() for b in level_blocks(U, max_size=4, max_levels=3)]
    [[0, 1, 2], [3, 4, 5], [0, 1, 3, 5], [1, 2, 4, 5]]
    """
    n = len(U)
    max_size = n if max_size is None else max_size
    everything = np.arange(n)
    levels = []
    for j in range(U.shape[1]):
        values, code = np.unique(U[:, j], return_inverse=True)
        if 2 <= len(values) <= max_levels:
            levels.append((len(values), code))
    # the rows at each level of each level feature, once (not once per feature windowed)
    at_level = [[np.flatnonzero(code == v) for v in range(m)] for m, code in levels]
    # the windows' sizes first (from level counts), so that only the smallest are built
    windows = []
    for g, (n_levels, code) in enumerate(levels):
        groups = [None] + [(f, v) for f, (m, _) in enumerate(levels) if f != g
                           for v in range(m)]
        for group in groups:
            rows = everything if group is None else at_level[group[0]][group[1]]
            ends = np.r_[0, np.cumsum(np.bincount(code[rows], minlength=n_levels))]
            for width in range(1, n_levels + 1):
                for first in range(n_levels - width + 1):
                    size = int(ends[first + width] - ends[first])
                    if 3 <= size <= max_size and size < n:
                        windows.append((size, g, group, first, width))
    windows.sort(key=lambda w: w[0])
    seen, blocks, total = set(), [], 0
    for size, g, group, first, width in windows:
        if total + size > max_rows:
            break
        rows = everything if group is None else at_level[group[0]][group[1]]
        at = levels[g][1][rows]
        block = rows[(at >= first) & (at < first + width)]
        key = block.tobytes()
        if key not in seen:
            seen.add(key)
            blocks.append(block)
            total += size
    return blocks


def _keyed(k: int, fn: Callable, args: tuple) -> tuple[int, Any]:
    return k, fn(*args)


def solve_blocks(jobs: Iterable[tuple[int, Callable, tuple]],
                 n_jobs: int | None = None) -> Iterator[tuple[int, Any]]:
    """Run ``fn(*args)`` for each ``(k, fn, args)`` of ``jobs`` and yield ``(k, result)``
    as each finishes (in any order with several workers).

    ``jobs`` is consumed lazily, one job when a worker is free (possibly from another
    thread): a generator that reads the results so far can stop (return) and size each
    block's time limit from the time left. With one worker (:func:`effective_workers` of
    ``n_jobs``) the jobs run here, in order. Ctrl-C raises ``KeyboardInterrupt`` from this
    generator; the results yielded before it stand, and the workers are stopped.

    Examples
    --------
    >>> sorted(solve_blocks(((k, pow, (k, 2)) for k in range(3)), n_jobs=1))
    [(0, 0), (1, 1), (2, 4)]
    """
    n_workers = effective_workers(n_jobs)
    if n_workers == 1:
        for k, fn, args in jobs:
            yield k, fn(*args)
        return
    # one job per worker at a time: a job's time limit is set when it starts, from the
    # time left then
    with Parallel(n_jobs=n_workers, prefer="processes", return_as="generator_unordered",
                  batch_size=1, pre_dispatch="n_jobs") as parallel:
        yield from parallel(delayed(_keyed)(k, fn, args) for k, fn, args in jobs)
