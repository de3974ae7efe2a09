"""Driver of the exact searches over a rank space: chunks, incumbents, budgets, parallelism.

A search is a function ``scan(r0, r1, ub_lt, ub_le) -> ChunkResult`` over a space of ranks
``[0, total)`` (see :mod:`exactclf._zero_one._kernels_cpu` for the incumbent semantics), plus a
``resolve(pending, bound)`` that turns deferred candidates into exact ones (those of value at
most ``bound``; the others may be dropped). The driver cuts the space
into rank-range chunks, runs them in waves on a joblib backend (threads by default, since the
kernels release the GIL; a Dask cluster under ``joblib.parallel_config(backend="dask")``),
keeps every candidate found with its rank, and gives each chunk the bounds implied by the
candidates of lower and higher rank. The result is the lowest-ranked among the best
candidates, whatever the chunking or the number of workers.

Budgets: ``max_candidates`` (deterministic: only ranks below it are searched) and
``time_limit`` (seconds); Ctrl-C stops the search like a budget. In all three cases the best
candidate so far is returned with ``complete=False``. A ``resolve`` that runs nested searches
reports one that did not complete by raising :class:`SearchStopped` (with the candidates it
did find); nested searches run with ``catch_interrupt=False`` so that Ctrl-C reaches the
outermost search, which alone stops and warns.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from joblib import Parallel, delayed

from ._certificate import StopReason
from ._resources import effective_workers
from ._warnings import warn

__all__ = ["Candidate", "ChunkResult", "SearchOutcome", "SearchStopped", "run_search"]


@dataclass(frozen=True, order=True)
class Candidate:
    """A solution found by a search: ordered by ``(value, rank)``."""

    value: float
    rank: int
    payload: Any = field(compare=False, default=None)


@dataclass
class ChunkResult:
    best: Candidate | None
    pending: Sequence[Any]
    r_stop: int


class SearchStopped(Exception):
    """Raised by ``resolve`` when a nested search stopped early (``reason``: its stop
    reason); ``candidates`` are those it found, valid but not proven best."""

    def __init__(self, reason: str, candidates: Sequence[Candidate] = ()):
        super().__init__(reason)
        self.reason = reason
        self.candidates = list(candidates)


@dataclass
class SearchOutcome:
    best: Candidate | None
    n_candidates: int
    complete: bool
    stop_reason: str | None
    elapsed: float


class _Progress:
    """Progress lines on stderr, at most one every ``every`` seconds (verbose >= 1).

    The bar and the ETA follow ``work_done``, the estimated fraction of the work settled
    (the fraction of ranks when the search gave no estimate of the work per rank);
    ``lower_bound``, when known, is shown with the gap ``(best - bound) / max(best, 1)``.
    """

    def __init__(self, desc: str, total: int, verbose: int, lower_bound: float | None = None,
                 every: float = 2.0):
        self.desc, self.total, self.verbose, self.every = desc, total, verbose, every
        self.lower_bound = lower_bound
        self.t0 = time.perf_counter()
        self.last = self.t0

    def update(self, done: int, work_done: float, best: float, force: bool = False) -> None:
        now = time.perf_counter()
        if self.verbose < 1 or (not force and now - self.last < self.every):
            return
        self.last = now
        elapsed = now - self.t0
        rate = done / elapsed if elapsed > 0 else 0.0
        frac = min(max(work_done, 0.0), 1.0)
        eta = elapsed * (1 - frac) / frac if frac > 0 else math.inf
        width = 24
        bar = "#" * int(frac * width)
        bound = ""
        if self.lower_bound is not None:
            gap = (best - self.lower_bound) / max(best, 1) if math.isfinite(best) else math.inf
            bound = f"  bound={self.lower_bound:g}  gap={100 * gap:.1f}%"
        print(
            f"{self.desc} [{bar:<{width}}] {100 * frac:5.1f}%  {done:.3g}/{self.total:.3g} "
            f"candidates  {rate:.3g}/s  ETA {eta:.0f}s  best={best:g}{bound}",
            file=sys.stderr,
            flush=True,
        )


class _SearchState:
    """What a run of :func:`run_search` has settled so far: the candidates found, the ranks
    left, the work done and, once known, why it stopped.

    Every wave's results are folded in here as they come, so that a search stopped by
    Ctrl-C still reports the candidates and the ranks settled before it.
    """

    def __init__(self, stop: int, upper_bound: float, cap: float,
                 resolve: Callable[[Sequence[Any], float], list[Candidate]],
                 work: Callable[[int], float]):
        self.stop, self.upper_bound, self.cap = stop, upper_bound, cap
        self.resolve, self.work = resolve, work
        self.found: list[Candidate] = []
        self.requeue: list[tuple[int, int]] = []  # unfinished chunk tails, searched first
        self.next_start = 0  # chunks are cut lazily from here on
        self.done = 0
        self.work_done = 0.0
        self.stop_reason: str | None = None

    def bounds(self, r0: int, r1: int) -> tuple[float, float]:
        """The incumbent bounds of the chunk ``[r0, r1)``: strict below the candidates of
        lower rank, non-strict below those of higher rank (so the lowest rank wins ties)."""
        lt = min([self.upper_bound] + [c.value for c in self.found if c.rank < r0])
        le = min([self.cap] + [c.value for c in self.found if c.rank >= r1])
        return lt, le

    def best_value(self) -> float:
        """The value to beat: the best candidate's, or ``upper_bound`` while there is none."""
        return min([self.upper_bound] + [c.value for c in self.found])

    def has_work(self) -> bool:
        """Whether ranks are left to search (queued tails or chunks not cut yet)."""
        return bool(self.requeue) or self.next_start < self.stop

    def next_wave(self, size: int, chunk_size: int) -> list[tuple[int, int]]:
        """The next wave: up to ``size`` rank ranges, the queued tails first, then fresh
        chunks of ``chunk_size`` ranks cut from the ranks not reached yet."""
        wave, self.requeue = self.requeue[:size], self.requeue[size:]
        for _ in range(size - len(wave)):
            if self.next_start < self.stop:
                wave.append((self.next_start, min(self.next_start + chunk_size, self.stop)))
                self.next_start = wave[-1][1]
        return wave

    def absorb(self, wave: list[tuple[int, int]], results: list[ChunkResult]) -> None:
        """Fold a wave's results in, chunk by chunk in rank order: keep their candidates
        (resolving the deferred ones against the best value so far), queue the tails they
        left, count the ranks and the work they settled; then keep the best candidate only.

        A ``resolve`` that stopped early sets :attr:`stop_reason` (its candidates are kept).
        """
        for (r0, r1), res in zip(wave, results, strict=True):
            if res.best is not None:
                self.found.append(res.best)
            if res.pending:
                bound = min(self.best_value(), self.cap)
                try:
                    resolved = self.resolve(res.pending, bound)
                except SearchStopped as exc:
                    resolved, self.stop_reason = exc.candidates, exc.reason
                self.found.extend(c for c in resolved
                                  if c.value < self.upper_bound and c.value <= self.cap)
            if res.r_stop < r1:
                self.requeue.append((res.r_stop, r1))
            self.done += res.r_stop - r0
            self.work_done += self.work(res.r_stop) - self.work(r0)
        self.found = [min(self.found)] if self.found else []


def _scan_in_time(scan: Callable[[int, int, float, float], ChunkResult], deadline: float,
                  r0: int, r1: int, lt: float, le: float) -> ChunkResult:
    """``scan(r0, r1, lt, le)``, or the chunk untouched (``r_stop = r0``) once ``deadline``
    has passed.

    A chunk not started by the deadline goes back to the queue: a wave (or a GPU, which
    runs its chunks one after another) never runs past the time limit by more than the
    chunks already started.
    """
    if time.perf_counter() >= deadline:
        return ChunkResult(None, (), r0)
    return scan(r0, r1, lt, le)


def _run_wave(scan: Callable[[int, int, float, float], ChunkResult], deadline: float,
              wave: list[tuple[int, int]], bounds: Callable[[int, int], tuple[float, float]],
              n_workers: int) -> list[ChunkResult]:
    """Scan the chunks of ``wave``, each with its ``bounds``, in order on one worker or on
    ``n_workers`` joblib threads (or the configured backend); their results in wave order."""
    scan_chunk = partial(_scan_in_time, scan, deadline)
    if n_workers == 1:
        return [scan_chunk(r0, r1, *bounds(r0, r1)) for r0, r1 in wave]
    with Parallel(n_jobs=n_workers, prefer="threads") as parallel:
        return parallel(delayed(scan_chunk)(r0, r1, *bounds(r0, r1)) for r0, r1 in wave)


def _chunk_size(wave: list[tuple[int, int]], results: list[ChunkResult], started: float,
                n_workers: int, target_seconds: float) -> int:
    """The next chunks' size, from the ranks per second and worker of the wave started at
    ``started``: about ``target_seconds`` of work each, between ``2**12`` and ``2**26``."""
    n_wave = sum(res.r_stop - r0 for (r0, _), res in zip(wave, results, strict=True))
    rate = n_wave / max(time.perf_counter() - started, 1e-6) / n_workers
    return int(min(max(rate * target_seconds, 1 << 12), 1 << 26))


def run_search(
    total: int,
    scan: Callable[[int, int, float, float], ChunkResult],
    resolve: Callable[[Sequence[Any], float], list[Candidate]],
    *,
    upper_bound: float,
    cap: float = math.inf,
    max_candidates: int | None = None,
    time_limit: float | None = None,
    n_jobs: int | None = None,
    verbose: int = 0,
    desc: str = "search",
    catch_interrupt: bool = True,
    chunk_size: int = 1 << 15,
    target_seconds: float = 0.25,
    lower_bound: float | None = None,
    work: Callable[[int], float] | None = None,
) -> SearchOutcome:
    """Run ``scan`` over ``[0, total)`` (or ``[0, max_candidates)``) and return the best
    candidate strictly below ``upper_bound`` and at most ``cap`` (None if there is none).

    ``chunk_size`` is the first chunk's size; later chunks are sized from the measured rate
    to take about ``target_seconds`` each (the result does not depend on it).
    ``catch_interrupt=False`` lets ``KeyboardInterrupt`` propagate (nested searches).
    Progress (``verbose``) only: ``lower_bound``, a proven bound shown with the gap;
    ``work(r)``, the estimated fraction of the work in the ranks below ``r`` (non-decreasing,
    0 to 1), from which the ETA is computed when the work per rank is far from uniform.
    """
    t0 = time.perf_counter()
    stop = total if max_candidates is None else min(total, int(max_candidates))
    if work is None:
        def work(r: int) -> float:
            return r / stop if stop else 1.0
    state = _SearchState(stop, upper_bound, cap, resolve, work)
    progress = _Progress(desc, stop, verbose, lower_bound)
    # workers that really run in parallel (n_jobs=10**12 must not mean 10**12 threads)
    n_workers = effective_workers(n_jobs)
    deadline = math.inf if time_limit is None else t0 + time_limit
    try:
        while state.has_work():
            if time.perf_counter() >= deadline:
                state.stop_reason = StopReason.TIME_LIMIT
                break
            wave = state.next_wave(2 * n_workers, chunk_size)
            tw = time.perf_counter()
            results = _run_wave(scan, deadline, wave, state.bounds, n_workers)
            state.absorb(wave, results)
            if state.stop_reason is not None:
                break
            progress.update(state.done, state.work_done, state.best_value())
            # re-size the remaining chunks from the measured rate
            chunk_size = _chunk_size(wave, results, tw, n_workers, target_seconds)
    except KeyboardInterrupt:
        if not catch_interrupt:
            raise
        state.stop_reason = StopReason.INTERRUPTED
        warn(
            f"{desc} interrupted: returning the best solution found so far "
            f"({state.done} of {stop} candidates searched)",
            RuntimeWarning,
        )
    if state.stop_reason is None and stop < total:
        state.stop_reason = StopReason.MAX_CANDIDATES
    progress.update(state.done, state.work_done, state.best_value(), force=True)
    return SearchOutcome(
        best=min(state.found) if state.found else None,
        n_candidates=state.done,
        complete=state.stop_reason is None,
        stop_reason=state.stop_reason,
        elapsed=time.perf_counter() - t0,
    )
