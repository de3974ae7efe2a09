"""Proven lower bounds on the minimum weighted 0-1 loss of an affine classifier.

Same instance as :func:`exactclf._zero_one._min01.solve_min01` (unique points ``Z`` with
weights ``wpos`` / ``wneg``). Each function returns a :class:`LowerBound`: a value that is
at most the optimum, and the name of the method that proved it.

- ``conflict_bound``: every point costs ``min(wpos_i, wneg_i)`` whatever the classifier.
- ``partition_bound``: for any partition of the points into blocks, the sum of the blocks'
  optima is at most the optimum (the optimal classifier's errors split over the blocks, and
  on each block they are at least that block's optimum). A block solved to completion
  contributes its optimum; a block stopped by its budget contributes its own proven bound.
  Blocks are nearby points, grown around a known labeling's errors, or random samples of
  the points, and are searched in parallel (:mod:`exactclf._partition`).
- ``cover_bound``: irreducible infeasible subsystems (IISs, see :mod:`._iis`) each force
  one error. Disjoint IISs give a packing bound (the sum of their cheapest points); the LP
  relaxation of the cover over all IISs found, strengthened by cutting planes, gives another;
  the set-cover MIP's dual bound a third.
- ``lower_bound``: a portfolio of the above within one time budget.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .._certificate import BoundMethod, StopReason
from .._geometry import affine_frame
from .._partition import error_blocks, merged_pairs, random_blocks, solve_blocks, spatial_blocks
from .._resources import effective_workers
from .._warnings import warn
from ._cover import CoverModel
from ._iis import IISProblem, peel, solve_iis_cover
from ._min01 import RATE, search_size, solve_min01

__all__ = ["LowerBound", "conflict_bound", "cover_bound", "lower_bound", "partition_bound"]

#: a block's search gets at least this many times its predicted enumeration time
_NEED_SLACK = 2.0
#: dimension from which the IIS bounds get the larger share of a budget
_IIS_FIRST_DIM = 5


@dataclass
class LowerBound:
    """A proven lower bound ``value`` on the optimum, obtained by ``method``, in ``elapsed``
    seconds; ``interrupted`` when Ctrl-C cut the computation short (the value is still
    proven). The bound type of the linear and the maxout 0-1 problems alike
    (:class:`exactclf.maxout._bounds.PartitionBound` adds where its partitions go on)."""

    value: float
    method: str
    elapsed: float = 0.0
    interrupted: bool = False


def conflict_bound(wpos: np.ndarray, wneg: np.ndarray) -> LowerBound:
    """Each point's minority weight: errs whatever the classifier does.

    Examples
    --------
    >>> conflict_bound(np.array([2.0, 1.0]), np.array([1.0, 0.0])).value
    1.0
    """
    return LowerBound(float(np.minimum(wpos, wneg).sum()), BoundMethod.CONFLICTS)


def _block_size(n: int, dim: int, seconds: float) -> int:
    """The largest block size whose enumeration of all blocks fits in ``seconds``."""
    m = n
    while m > dim + 2 and math.ceil(n / m) * search_size(m, dim) > seconds * RATE:
        m = int(m * 0.9)
    return max(m, min(n, dim + 2))


def _block_bound(Z, wpos, wneg, until: float, solver: str,
                 incumbent=None) -> tuple[float, bool, bool]:
    """Proven lower bound on one block's optimum (searched until ``until``, a
    ``time.time()`` value: a worker may start the block late), whether it is the optimum,
    and whether Ctrl-C stopped the block's solver; ``incumbent``, the block's labeling by a
    known classifier, is the enumeration's first bound."""
    seconds = until - time.time()
    if seconds <= 0:
        return float(np.minimum(wpos, wneg).sum()), False, False
    dim = affine_frame(Z).dim
    if solver == "auto":
        solver = "ice" if search_size(len(Z), dim) <= seconds * RATE else "iis"
    if solver == "ice":
        res = solve_min01(Z, wpos, wneg, incumbent=incumbent, time_limit=seconds)
        value = res.value if res.complete else float(np.minimum(wpos, wneg).sum())
        return value, res.complete, res.stop_reason == StopReason.INTERRUPTED
    res = solve_iis_cover(Z, wpos, wneg, incumbent=incumbent, time_limit=seconds)
    return res.lower_bound, res.complete, res.stop_reason == StopReason.INTERRUPTED


def _partition_sum(Z, wpos, wneg, blocks, incumbent, *, deadline: float, solver: str,
                   n_jobs, floors=None) -> tuple[list[float], int, bool]:
    """One partition's bound: its blocks' proven bounds (searched on ``n_jobs`` workers,
    each block in its share of the time left until ``deadline``, a ``time.perf_counter()``
    value), the blocks solved, and whether Ctrl-C stopped it.

    A block not started by the deadline, or left running by Ctrl-C, counts with its
    ``floors`` entry (a bound proven before; default: its conflicting duplicates); so does
    one where the ``incumbent`` labeling errs no more than that, which is then its optimum,
    proven without a search.
    """
    bounds = [float(np.minimum(wpos[b], wneg[b]).sum()) for b in blocks]
    if floors is not None:
        bounds = [max(a, b) for a, b in zip(bounds, floors, strict=True)]
    if incumbent is None:
        search = list(range(len(blocks)))
    else:
        cost = np.where(incumbent, wneg, wpos)
        search = [k for k, b in enumerate(blocks) if cost[b].sum() > bounds[k]]
    state = {"solved": len(blocks) - len(search), "interrupted": False}
    workers = effective_workers(n_jobs)

    def jobs():
        for i, k in enumerate(search):
            left = deadline - time.perf_counter()
            if left <= 0 or state["interrupted"]:
                return
            block = blocks[k]
            # the time left, shared by the blocks not started, ``workers`` at a time, but at
            # least what the block's enumeration is predicted to need where it fits: a block
            # stopped short proves little, so when time runs short fewer blocks are solved,
            # each to the end (an IIS cover's time cannot be predicted: its fair share)
            need = _NEED_SLACK * search_size(len(block), Z.shape[1]) / RATE
            if solver == "iis" or need > left:
                need = 0.0
            seconds = max(min(left, max(left * workers / (len(search) - i), need)), 1e-3)
            yield k, _block_bound, (Z[block], wpos[block], wneg[block], time.time() + seconds,
                                    solver, None if incumbent is None else incumbent[block])

    try:
        for k, (value, complete, interrupted) in solve_blocks(jobs(), n_jobs):
            bounds[k] = max(bounds[k], value)
            state["solved"] += complete
            state["interrupted"] = state["interrupted"] or interrupted
    except KeyboardInterrupt:  # blocks still running count with their floors
        warn("partition_bound interrupted: returning the bound proven so far", UserWarning)
        state["interrupted"] = True
    return bounds, state["solved"], state["interrupted"]


def partition_bound(
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    *,
    time_limit: float = 5.0,
    block_size: int | None = None,
    solver: str = "auto",
    blocks: str = "local",
    incumbent: np.ndarray | None = None,
    random_state: int | np.random.Generator | None = 0,
    n_jobs: int | None = None,
) -> LowerBound:
    """Sum of the exact optima of the blocks of partitions of the points (the best of the
    partitions tried within ``time_limit``).

    Parameters
    ----------
    Z : (n, d) array of distinct points.
    wpos, wneg : (n,) weights of the positive / negative samples at each point.
    time_limit : float
        Seconds for all partitions together. Blocks stopped by their share still count
        with their own proven bound; blocks not started by then, with their conflicting
        duplicates.
    block_size : int, optional
        Points per block. Default: the largest size whose enumeration would take a
        twentieth of the budget (``"local"``) or a tenth of it on the workers
        (``"random"``); later partitions use larger blocks while time is left.
    solver : {"auto", "ice", "iis"}
        Exact solver of the blocks: enumeration (:func:`solve_min01`), the IIS cover
        (:func:`solve_iis_cover`), or whichever the block's size suggests.
    blocks : {"local", "random"}
        ``"local"``: nearby points (:func:`~exactclf._partition.spatial_blocks`), half of
        the partitions grown around the ``incumbent``'s errors
        (:func:`~exactclf._partition.error_blocks`). ``"random"``: random samples of the
        points (:func:`~exactclf._partition.random_blocks`), which prove more where errors
        are spread through many points; each later partition merges the blocks of the one
        before in pairs (:func:`~exactclf._partition.merged_pairs`), so that the bound
        never falls when the budget ends inside a partition.
    incumbent : (n,) bool array, optional
        A realizable labeling (e.g. the best known classifier's): it starts each block's
        search, and settles blocks where it errs only on conflicting duplicates.
    random_state : int, Generator or None
        Seeds the partitions: the same blocks whatever ``n_jobs``.
    n_jobs : int, optional
        Workers searching a partition's blocks (joblib's convention; see
        :func:`~exactclf._partition.solve_blocks`).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(40, 2))
    >>> pos = Z[:, 0] + 0.5 * rng.normal(size=40) > 0
    >>> lb = partition_bound(Z, pos * 1.0, ~pos * 1.0, block_size=10)
    >>> lb.method.startswith("partition")
    True
    >>> partition_bound(Z, pos * 1.0, ~pos * 1.0, blocks="random").value >= lb.value - 10
    True
    """
    t0 = time.perf_counter()
    Z = np.asarray(Z, dtype=np.float64)
    wpos = np.asarray(wpos, dtype=np.float64)
    wneg = np.asarray(wneg, dtype=np.float64)
    rng = np.random.default_rng(random_state)
    n = len(Z)
    dim = affine_frame(Z).dim
    best = conflict_bound(wpos, wneg)
    if n == 0 or dim == 0:
        return best
    errors = None
    if incumbent is not None:
        incumbent = np.asarray(incumbent, dtype=bool)
        errors = np.where(incumbent, wneg, wpos) > np.minimum(wpos, wneg)
    if blocks == "random":
        return _random_partitions(Z, wpos, wneg, t0, time_limit, block_size, solver,
                                  incumbent, rng, n_jobs, best)
    # small blocks first (a bound soon), then larger ones (a better bound) while time is
    # left: the same sizes whatever the workers, which only reach larger ones sooner
    m = block_size or _block_size(n, dim, 0.05 * time_limit)
    interrupted = False
    while not interrupted:
        if time.perf_counter() - t0 >= time_limit:
            break
        if errors is not None and rng.random() < 0.5:
            cut = error_blocks(Z, errors, m, rng)
        else:
            cut = spatial_blocks(Z, m, rng)
        values, n_done, interrupted = _partition_sum(
            Z, wpos, wneg, cut, incumbent, deadline=t0 + time_limit, solver=solver,
            n_jobs=n_jobs)
        if sum(values) > best.value:
            best = LowerBound(float(sum(values)), f"partition ({n_done}/{len(cut)} blocks of "
                                                  f"~{m} points solved)")
        if block_size is not None or m >= n:
            break
        m = min(n, int(m * 1.5) + 1)
    best.interrupted = interrupted
    best.elapsed = time.perf_counter() - t0
    return best


def _random_partitions(Z, wpos, wneg, t0, time_limit, block_size, solver, incumbent, rng,
                       n_jobs, best) -> LowerBound:
    """:func:`partition_bound` with ``blocks="random"``: one random partition, then its
    blocks merged in pairs while time is left, each merged block counting with its parts'
    sum until solved."""
    n, dim = Z.shape
    workers = effective_workers(n_jobs)
    # a first partition predicted to take a tenth of the budget: one that is not finished
    # proves little (its blocks not solved count with their conflicts), and under load
    # the prediction is optimistic; the merged partitions after it never lose
    m = block_size or _block_size(n, dim, 0.1 * workers * time_limit)
    cut, floors = random_blocks(n, m, rng), None
    interrupted = False
    while not interrupted and time.perf_counter() - t0 < time_limit:
        values, n_done, interrupted = _partition_sum(
            Z, wpos, wneg, cut, incumbent, deadline=t0 + time_limit, solver=solver,
            n_jobs=n_jobs, floors=floors)
        if sum(values) > best.value:
            halves = "" if floors is None else ", the others bounded by their halves"
            best = LowerBound(float(sum(values)), f"partition ({n_done}/{len(cut)} random "
                                                  f"blocks of ~{n // len(cut)} points solved"
                                                  f"{halves})")
        if block_size is not None or len(cut) == 1:
            break
        cut, floors = merged_pairs(cut, values)
    best.interrupted = interrupted
    best.elapsed = time.perf_counter() - t0
    return best


def cover_bound(
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    *,
    time_limit: float = 5.0,
    mip: bool = True,
    random_state: int | np.random.Generator | None = 0,
) -> LowerBound:
    """Bounds from IISs: a packing of disjoint IISs, then the LP relaxation of the cover
    over the IISs found, with cutting planes (IISs among the points the LP barely gives up),
    then (``mip``) the set-cover MIP's dual bound in the remaining time.

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    >>> wpos = np.array([1.0, 0, 1, 0, 1, 0])
    >>> lb = cover_bound(Z, wpos, 1 - wpos)
    >>> lb.value
    2.0
    """
    t0 = time.perf_counter()
    deadline = t0 + time_limit
    rng = np.random.default_rng(random_state)
    prob = IISProblem(np.asarray(Z, dtype=np.float64), np.asarray(wpos, dtype=np.float64),
                      np.asarray(wneg, dtype=np.float64))
    best = conflict_bound(wpos, wneg)
    if len(prob.active) == 0:
        return best
    cost = prob.cost
    keep_all = np.ones(len(cost), dtype=bool)
    try:
        packing, _ = peel(prob.oracle, keep_all, cost, rng, deadline, disjoint=True)
        value = prob.base + sum(float(cost[t].min()) for t in packing)
        if value > best.value:
            best = LowerBound(value, f"IIS packing ({len(packing)} disjoint IISs)")
        master = CoverModel(cost)
        master.add_cuts(packing)
        cuts, _ = peel(prob.oracle, keep_all, cost, rng, deadline)
        master.add_cuts(cuts)
        # cutting planes on the LP relaxation: an IIS among points with x_i < 1 / (r + 3) has
        # sum x_i < 1 (it has at most r + 2 points), so it cuts the LP point off
        eps = 1.0 / (prob.Zf.shape[1] + 3)
        while time.perf_counter() < deadline:
            x, bound, _ = master.solve(integer=False,
                                       time_limit=deadline - time.perf_counter())
            if prob.base + bound > best.value:
                best = LowerBound(prob.base + bound, BoundMethod.IIS_LP)
            if x is None:
                break
            cuts, _ = peel(prob.oracle, x < eps, cost, rng, deadline)
            if not master.add_cuts(cuts):
                break
        if mip and time.perf_counter() < deadline:
            _, bound, _ = master.solve(integer=True,
                                       time_limit=deadline - time.perf_counter())
            if prob.base + bound > best.value:
                best = LowerBound(prob.base + bound, BoundMethod.IIS_MIP)
    except FloatingPointError:
        pass  # a subset floating point cannot decide: the bound so far stands
    except KeyboardInterrupt:
        warn("cover_bound interrupted: returning the best bound proven so far",
             UserWarning)
        best.interrupted = True
    best.elapsed = time.perf_counter() - t0
    return best


def lower_bound(
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    *,
    time_limit: float = 5.0,
    incumbent: np.ndarray | None = None,
    random_state: int | np.random.Generator | None = 0,
    n_jobs: int | None = None,
) -> LowerBound:
    """The best of the bounds of this module within ``time_limit`` seconds (the IIS cover
    bounds get a third of it, the partition bound the rest; two thirds and one third from
    dimension 5 on, where the blocks the enumeration can solve are small). ``incumbent``
    and ``n_jobs``: see :func:`partition_bound`.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> Z = rng.normal(size=(30, 2))
    >>> pos = Z[:, 1] + 0.7 * rng.normal(size=30) > 0
    >>> lb = lower_bound(Z, pos * 1.0, ~pos * 1.0, time_limit=2.0)
    >>> lb.value >= 0
    True
    """
    t0 = time.perf_counter()
    dim = affine_frame(np.asarray(Z, dtype=np.float64)).dim
    # from D = 5 on, blocks the enumeration can solve are small, and small blocks fit their
    # noise (weak partition bounds): the IIS bounds then get more of the time
    share = 2 / 3 if dim >= _IIS_FIRST_DIM else 1 / 3
    best = cover_bound(Z, wpos, wneg, time_limit=share * time_limit,
                       random_state=random_state)
    if not best.interrupted:
        left = time_limit - (time.perf_counter() - t0)
        second = partition_bound(Z, wpos, wneg, time_limit=max(left, 1e-3),
                                 incumbent=incumbent, random_state=random_state,
                                 n_jobs=n_jobs)
        best = max(best, second, key=lambda b: b.value)
    best.elapsed = time.perf_counter() - t0
    return best
