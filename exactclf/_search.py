"""Driver of the exact searches over a rank space: chunks, incumbents, budgets, parallelism.

A search is a function ``scan(r0, r1, ub_lt, ub_le) -> ChunkResult`` over a space of ranks
``[0, total)`` (see :mod:`exactclf.linear._kernels_cpu` for the incumbent semantics), plus a
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
    found: list[Candidate] = []
    requeue: list[tuple[int, int]] = []  # unfinished chunk tails, searched first
    next_start = 0  # chunks are cut lazily from here on
    done = 0
    work_done = 0.0
    if work is None:
        def work(r: int) -> float:
            return r / stop if stop else 1.0
    progress = _Progress(desc, stop, verbose, lower_bound)
    stop_reason = None

    def bounds(r0: int, r1: int) -> tuple[float, float]:
        lt = min([upper_bound] + [c.value for c in found if c.rank < r0])
        le = min([cap] + [c.value for c in found if c.rank >= r1])
        return lt, le

    def best_value() -> float:
        return min([upper_bound] + [c.value for c in found])

    # workers that really run in parallel (n_jobs=10**12 must not mean 10**12 threads)
    n_workers = effective_workers(n_jobs)

    deadline = math.inf if time_limit is None else t0 + time_limit

    def scan_in_time(r0: int, r1: int, lt: float, le: float) -> ChunkResult:
        # a chunk not started by the deadline goes back to the queue untouched: a wave (or
        # a GPU, which runs its chunks one after another) never runs past the time limit by
        # more than the chunks already started
        if time.perf_counter() >= deadline:
            return ChunkResult(None, (), r0)
        return scan(r0, r1, lt, le)

    def run_wave(wave):
        if n_workers == 1:
            return [scan_in_time(r0, r1, *bounds(r0, r1)) for r0, r1 in wave]
        with Parallel(n_jobs=n_workers, prefer="threads") as parallel:
            return parallel(delayed(scan_in_time)(r0, r1, *bounds(r0, r1)) for r0, r1 in wave)

    try:
        while requeue or next_start < stop:
            if time.perf_counter() >= deadline:
                stop_reason = StopReason.TIME_LIMIT
                break
            wave, requeue = requeue[: 2 * n_workers], requeue[2 * n_workers :]
            for _ in range(2 * n_workers - len(wave)):
                if next_start < stop:
                    wave.append((next_start, min(next_start + chunk_size, stop)))
                    next_start = wave[-1][1]
            tw = time.perf_counter()
            results = run_wave(wave)
            for (r0, r1), res in zip(wave, results, strict=True):
                if res.best is not None:
                    found.append(res.best)
                if res.pending:
                    bound = min(best_value(), cap)
                    try:
                        resolved = resolve(res.pending, bound)
                    except SearchStopped as exc:
                        resolved, stop_reason = exc.candidates, exc.reason
                    found.extend(c for c in resolved if c.value < upper_bound and c.value <= cap)
                if res.r_stop < r1:
                    requeue.append((res.r_stop, r1))
                done += res.r_stop - r0
                work_done += work(res.r_stop) - work(r0)
            found = [min(found)] if found else []
            if stop_reason is not None:
                break
            progress.update(done, work_done, best_value())
            # re-size the remaining chunks from the measured rate
            n_wave = sum(res.r_stop - r0 for (r0, _), res in zip(wave, results, strict=True))
            rate = n_wave / max(time.perf_counter() - tw, 1e-6) / n_workers
            chunk_size = int(min(max(rate * target_seconds, 1 << 12), 1 << 26))
    except KeyboardInterrupt:
        if not catch_interrupt:
            raise
        stop_reason = StopReason.INTERRUPTED
        warn(
            f"{desc} interrupted: returning the best solution found so far "
            f"({done} of {stop} candidates searched)",
            RuntimeWarning,
        )
    if stop_reason is None and stop < total:
        stop_reason = StopReason.MAX_CANDIDATES
    progress.update(done, work_done, best_value(), force=True)
    return SearchOutcome(
        best=min(found) if found else None,
        n_candidates=done,
        complete=stop_reason is None,
        stop_reason=stop_reason,
        elapsed=time.perf_counter() - t0,
    )
