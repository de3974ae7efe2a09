"""Coreset heuristic for large data (the Deep-ICE paper's Algorithm 4, re-derived).

Repeatedly: shuffle the current point set, split it into blocks of at most ``block_size``
points, solve each block exactly, and score every block optimum on the *full* data; keep the
``heap_size`` best networks with their blocks; the next point set is the union of those
blocks. When a pass removes few points, the heap shrinks (by ``shrink``) so the point set
keeps shrinking. Once at most ``stop_size`` points remain, solve them exactly too. Every
candidate is scored on the full data, and the best is returned: the search is anytime.

A by-product is a proven lower bound: the blocks of one pass partition the points of that
pass, a subset of all of them, and errors add over disjoint blocks, so the sum of the
blocks' exact optima bounds the full optimum from below (a block whose search did not
complete counts with its conflicting duplicates only); the best pass sum is kept.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field

import numpy as np

from .._certificate import StopReason
from .._combinatorics import MAX_RANK
from .._warnings import warn
from .._zero_one._incumbent import best_incumbent
from .._zero_one._local_search import improve_incumbent
from .._zero_one._min01 import labeling_errors, search_size, solve_min01
from ._exact import exact_union, realize_union, union_on

__all__ = ["CoresetResult", "coreset_union"]


@dataclass
class CoresetResult:
    value: float
    planes: list[tuple[np.ndarray, float]]
    lower_bound: float
    n_evaluated: int
    n_blocks: int
    stop_reason: str | None


def realize_on(Z, planes, want_w, other_w):
    """Planes found on a subset of ``Z`` realized again on all of it: ``(planes, value)``,
    or None when a labeling they give ``Z`` is not realizable in float64.

    A max-margin plane of some of the points (a block, the points the other half-spaces
    leave out) may pass through others: on integer features the plane midway between two
    points runs through a third. Such a point's side is a rounding accident that the model
    in the original units need not repeat (the network then makes other errors than it
    was scored with); realized on all the points, every point has a margin.
    """
    planes, value, exact = realize_union(Z, [Z @ a + b > 0 for a, b in planes], want_w,
                                         other_w)
    return (planes, value) if exact else None


def _local_plane(Z, want_w, other_w, start, seconds):
    """The best labeling of one half-space found in ``seconds`` from ``start`` or the linear
    surrogates (whichever errs less) by the linear local search, and whether Ctrl-C stopped
    it."""
    end = time.perf_counter() + seconds
    best, value, _, interrupted = best_incumbent(Z, want_w, other_w,
                                                 anneal_seconds=seconds / 4)
    if labeling_errors(start, want_w, other_w) <= value:
        best = start
    if not interrupted:
        best, _, interrupted = improve_incumbent(Z, want_w, other_w, best,
                                                 time_limit=max(end - time.perf_counter(), 0.0))
    return best, interrupted


def refine(Z, planes, want_w, other_w, *, max_rounds=10, max_candidates=10**7, deadline=None):
    """Exact block coordinate descent over the half-spaces; returns ``(planes, value,
    interrupted)``.

    Each round re-solves one half-space exactly (the linear 0-1 problem on the points the
    other half-spaces leave out) while the others stay fixed; with a ``deadline``, a problem
    beyond ``max_candidates`` candidates goes to the linear problem's incumbents and local
    search instead (a large-neighbourhood move over one half-space). ``deadline``: a
    ``time.perf_counter()`` value after which no new solve starts (a solve that is running
    stops there and keeps its best plane). Ctrl-C stops it with the best planes so far and
    ``interrupted`` True (the solve that caught it does not re-raise).
    """
    planes = list(planes)

    def errors(ps):
        inside = union_on(Z, ps)
        return float(other_w[inside].sum() + want_w[~inside].sum())

    value = errors(planes)
    for _ in range(max_rounds):
        before = value
        for k in range(len(planes)):
            left = None if deadline is None else deadline - time.perf_counter()
            if left is not None and left <= 0:
                return planes, value, False
            others = planes[:k] + planes[k + 1 :]
            free = ~union_on(Z, others) if others else np.ones(len(Z), dtype=bool)
            if not free.any():
                continue
            a, b = planes[k]
            Zf, wf, of, start = Z[free], want_w[free], other_w[free], Z[free] @ a + b > 0
            size = search_size(int(free.sum()), Z.shape[1])
            if left is not None and size > max_candidates:
                # beyond the enumeration, a capped one would only see the first points'
                # planes: the linear problem's incumbents and local search, in this
                # half-space's share of the time left
                positive, interrupted = _local_plane(Zf, wf, of, start, left / (len(planes) - k))
            elif size > MAX_RANK:  # an enumeration beyond the addressable ranks would raise
                continue
            else:
                res = solve_min01(Zf, wf, of, incumbent=start, max_candidates=max_candidates,
                                  time_limit=left)
                positive, interrupted = res.positive, res.stop_reason == StopReason.INTERRUPTED
            if interrupted:
                return planes, value, True
            if labeling_errors(positive, wf, of) < labeling_errors(start, wf, of):
                # a plane float64 cannot place exactly is still scored by what it realizes
                plane = realize_union(Zf, [positive], wf, of)[0]
                realized = realize_on(Z, planes[:k] + plane + planes[k + 1 :], want_w, other_w)
                if realized is not None and realized[1] < value:
                    planes, value = realized
        if value >= before:
            break
    return planes, value, False


@dataclass
class _CoresetSearch:
    """The state of :func:`coreset_union` across its passes: the best networks scored on all
    the points (``heap``, a max-heap on their errors of ``(-value, tie, planes, block)``, at
    most ``heap_cap`` of them), the unions already scored (``seen``, so that a network
    found twice takes one place), the counts reported and why the search stopped."""

    Z: np.ndarray
    want_w: np.ndarray
    other_w: np.ndarray
    K: int
    deadline: float | None
    heap_cap: int
    heap: list = field(default_factory=list)
    seen: set[bytes] = field(default_factory=set)
    n_eval: int = 0
    n_blocks: int = 0
    stop_reason: str | None = None

    def left(self) -> float | None:
        """Seconds left before the deadline (None without one)."""
        return None if self.deadline is None else self.deadline - time.perf_counter()

    def out_of_time(self) -> bool:
        """Whether the deadline has passed: no block solve starts after it."""
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def trim(self) -> None:
        """Drop the worst networks beyond ``heap_cap``."""
        while len(self.heap) > self.heap_cap:
            heapq.heappop(self.heap)

    def consider(self, block) -> float:
        """Solve ``block`` exactly, score its optimum on all points; returns a proven
        lower bound on the block's optimum."""
        Z, want_w, other_w = self.Z, self.want_w, self.other_w
        res = exact_union(Z[block], want_w[block], other_w[block], self.K,
                          time_limit=self.left())
        proven = res.value
        if not res.complete:
            proven = float(np.minimum(want_w[block], other_w[block]).sum())
            self.stop_reason = res.stop_reason or StopReason.TIME_LIMIT
        self.n_eval += res.n_evaluated
        self.n_blocks += 1
        planes = realize_union(Z[block], res.sets, want_w[block], other_w[block])[0]
        realized = realize_on(Z, planes, want_w, other_w)
        if realized is None:
            return proven
        planes, value = realized
        key = union_on(Z, planes).tobytes()
        if key in self.seen:
            return proven
        self.seen.add(key)
        heapq.heappush(self.heap, (-value, self.n_blocks, planes, block))
        self.trim()
        return proven

    def solve_pass(self, points, block_size, rng) -> float:
        """Shuffle ``points`` (in place), split them into blocks of at most ``block_size``
        and solve the blocks in turn until one stops the search or time runs out; returns
        the pass's lower bound, the sum of the blocks' proven bounds (a block not solved
        counts with its conflicting duplicates): the blocks are disjoint, so errors add."""
        rng.shuffle(points)
        blocks = np.array_split(points, int(np.ceil(len(points) / block_size)))
        proven = [float(np.minimum(self.want_w[b], self.other_w[b]).sum()) for b in blocks]
        for k, block in enumerate(blocks):
            if self.heap and self.out_of_time():
                self.stop_reason = StopReason.TIME_LIMIT
                break
            proven[k] = self.consider(np.sort(block))
            if self.stop_reason is not None:
                break
        return sum(proven)

    def next_points(self, points, shrink) -> np.ndarray:
        """The next pass's points: the union of the kept networks' blocks; when that
        removes few of ``points``, the heap shrinks by ``shrink`` first, so that the point
        set keeps shrinking."""
        merged = self._merged()
        if len(points) - len(merged) < max(2, len(points) // 20):
            self.heap_cap = max(1, int(self.heap_cap * shrink))
            self.trim()
            merged = self._merged()
        return merged

    def _merged(self) -> np.ndarray:
        """The points of the kept networks' blocks."""
        return np.unique(np.concatenate([entry[3] for entry in self.heap]))

    def best_network(self, time_limit) -> tuple[float, list]:
        """``(value, planes)`` returned: the better constant network if none was scored,
        the best one scored after Ctrl-C, else the best one refined (:func:`refine`) in
        what is left of ``time_limit``, at least a tenth of it (Ctrl-C in the refinement
        sets ``stop_reason``)."""
        if not self.heap:  # nothing scored yet: the better constant network
            empty, full = (np.zeros(self.Z.shape[1]), -1.0), (np.zeros(self.Z.shape[1]), 1.0)
            return min((float(self.want_w.sum()), [empty]), (float(self.other_w.sum()), [full]),
                       key=lambda entry: entry[0])
        if self.stop_reason == StopReason.INTERRUPTED:
            return -max(self.heap)[0], max(self.heap)[2]
        final = (None if self.deadline is None
                 else max(self.deadline, time.perf_counter() + time_limit / 10))
        planes, value, interrupted = refine(self.Z, max(self.heap)[2], self.want_w,
                                            self.other_w, deadline=final)
        if interrupted:
            self.stop_reason = StopReason.INTERRUPTED
        return value, planes


def coreset_union(
    Z: np.ndarray,
    want_w: np.ndarray,
    other_w: np.ndarray,
    K: int,
    *,
    block_size: int = 20,
    heap_size: int = 10,
    stop_size: int = 25,
    shrink: float = 0.95,
    max_passes: int = 50,
    rng: np.random.Generator,
    time_limit: float | None = None,
    verbose: int = 0,
) -> CoresetResult:
    """Best union of K half-spaces found by the coreset heuristic (see module docstring).

    With ``time_limit`` (seconds) no block solve starts after it; a block solve that is
    running stops there (its best union is still scored, but is no lower bound), and the
    final refinement gets what is left, at least a tenth of the budget. Ctrl-C returns the
    best network scored so far (``stop_reason="interrupted"``, no refinement).
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    search = _CoresetSearch(Z, want_w, other_w, K, deadline, heap_cap=heap_size)
    lower = float(np.minimum(want_w, other_w).sum())  # conflicting duplicates
    points = np.arange(len(Z))
    try:
        for _ in range(max_passes):
            if len(points) <= stop_size or search.stop_reason is not None:
                break
            lower = max(lower, search.solve_pass(points, block_size, rng))
            if search.stop_reason is not None:
                break
            points = search.next_points(points, shrink)
            if verbose:
                best = -max(search.heap)[0]
                print(f"Deep-ICE coreset: {len(points)} points left, best {best:g} errors, "
                      f"lower bound {lower:g}")
        if search.stop_reason is None:
            lower = max(lower, search.consider(np.sort(points)))
    except KeyboardInterrupt:  # landed between block solves (those catch their own)
        search.stop_reason = StopReason.INTERRUPTED
        warn("Deep-ICE coreset interrupted: returning the best network found so far",
             RuntimeWarning)
    value, planes = search.best_network(time_limit)
    return CoresetResult(value, planes, lower, search.n_eval, search.n_blocks,
                         search.stop_reason)
