"""Better incumbents for the linear 0-1 problem beyond the exact range: exact solves of
subsets, scored on all points.

Same instance as :func:`~exactclf._zero_one._min01.solve_min01` (unique points ``Z``, weights
``wpos`` / ``wneg``). The optimum of a subset of the points is a plane that may do well on all
of them; two kinds of subsets are solved exactly, in turn, within a time budget:

- *the band*: the points nearest to the incumbent's plane, whose side a small move of the
  plane changes (a local move: the points far from the plane keep their side unless the plane
  turns far);
- *a random sample* of the points (the Deep-ICE paper's coreset idea for one half-space: the
  exact optimum of a sample estimates the optimum of all the points), which can land far from
  the incumbent.

Above :data:`_ENUMERATION_UP_TO` dimensions, where the IIS cover solves the subsets, two
larger neighbourhoods are solved *with the points around them kept on their side*: the band,
and the points nearest to one of the incumbent's errors. Keeping a point's side is a weight on
it above the whole instance's, so the IIS cover never moves it; the optimum is then the best
plane among those that differ from the incumbent only inside the neighbourhood on the points
solved (a large-neighbourhood search), which a subset solved alone cannot promise. Only the
outside points nearest to the neighbourhood are kept (:data:`_RING` times its size): far
points rarely bind, and a cover over all of them spends its time peeling them. A
neighbourhood proven without improvement grows, one that runs out of time shrinks.

Each subset is solved by the enumeration in low dimension and by the IIS cover above
(:data:`_ENUMERATION_UP_TO`), with the incumbent's labeling of the subset to beat; the
subset's optimal labeling is realized by its maximum-margin plane, and that plane's labeling
of *all* points replaces the incumbent when it errs less. Every labeling returned is realized
by a strict affine classifier, so its value is an achieved upper bound.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from scipy.spatial import cKDTree

from .._certificate import StopReason
from .._partition import solve_blocks
from .._resources import effective_workers
from .._separator import UnrealizableLabeling, max_margin_separator
from ._iis import solve_iis_cover
from ._min01 import RATE, labeling_errors, search_size, solve_min01

__all__ = ["LARGE_NEIGHBOURHOODS_FROM", "improve_from_starts", "improve_incumbent",
           "worth_searching"]

#: the subsets are solved by the enumeration up to this dimension, by the IIS cover above:
#: there the enumeration's ``C(n, D)`` cost limits its subsets to a few dozen points, the
#: IIS cover solves larger ones in the same time, and larger subsets reach better planes
_ENUMERATION_UP_TO = 5
#: seconds per subset solve, and points of an IIS-cover subset per dimension (the IIS cover
#: proves instances of about this size within such a slice)
_SLICE = 2.0
_IIS_POINTS_PER_DIM = 12
#: the local search runs on instances with at least this many times a subset's points
_MIN_SUBSETS = 4
#: from this dimension on, neighbourhoods are also solved with the other points' sides kept
LARGE_NEIGHBOURHOODS_FROM = _ENUMERATION_UP_TO + 1
#: points per dimension of a neighbourhood solved with the other points' sides kept, at
#: first and at least, and seconds per solve: large enough to leave the basin the small
#: subsets stall in, small enough for a solve within the slice (larger neighbourhoods make
#: the result vary more from run to run)
_FIXED_POINTS_PER_DIM, _FIXED_MIN_PER_DIM = 36, 12
_FIXED_SLICE = 5.0
#: points solved per point of a neighbourhood (it and the outside points nearest to it): a
#: few nearest outside points bind as the whole does, at a fraction of the solve's cost (the
#: result hardly depends on the factor; keeping every point leaves fewer solves and worse
#: planes)
_RING = 4
#: a run of :func:`improve_from_starts` stops after this share of its time limit (and at
#: least a few large-neighbourhood solves) without a better labeling
_PATIENCE_SHARE = 0.1
_MIN_PATIENCE = 3 * _FIXED_SLICE


def _plane(Z, positive):
    """A plane realizing ``positive`` on ``Z`` (its max-margin one), or None."""
    if positive.all() or not positive.any():
        return None
    try:
        return max_margin_separator(Z, positive)
    except (UnrealizableLabeling, RuntimeError):
        return None


def _subset_size(n: int, dim: int, seconds: float) -> int:
    """Points of a subset whose exact solve fits ``seconds``."""
    if dim > _ENUMERATION_UP_TO:
        return min(n, _IIS_POINTS_PER_DIM * dim)
    m = dim + 2
    while m < n and search_size(m + 1, dim) <= seconds * RATE:
        m = min(n, max(m + 1, int(m * 1.1)))
    return m


def worth_searching(n: int, dim: int) -> bool:
    """Whether the subsets solved exactly are a small part of ``n`` points in ``dim``-D (on
    smaller instances the exact paths do better with the time).

    Examples
    --------
    >>> worth_searching(300, 3), worth_searching(50000, 3), worth_searching(150, 10)
    (False, True, False)
    """
    return dim > 0 and n >= _MIN_SUBSETS * _subset_size(n, dim, _SLICE)


def _solve_subset(Z, wpos, wneg, incumbent, seconds):
    """The subset's best labeling found within ``seconds`` (at least as good as
    ``incumbent``), and whether Ctrl-C stopped the solve."""
    if Z.shape[1] > _ENUMERATION_UP_TO:
        res = solve_iis_cover(Z, wpos, wneg, incumbent=incumbent, time_limit=seconds)
    else:
        res = solve_min01(Z, wpos, wneg, incumbent=incumbent, time_limit=seconds)
    return res.positive, res.stop_reason == StopReason.INTERRUPTED


def _solve_fixed(Z, wpos, wneg, incumbent, inside, seconds):
    """The max-margin plane (or None) of the best labeling found within ``seconds`` among
    those equal to ``incumbent`` on the outside points solved (the :data:`_RING` x
    ``inside.sum()`` points nearest to the mask ``inside``, it included), whether that search
    completed, and whether Ctrl-C stopped it."""
    idx = np.flatnonzero(inside)
    dist, _ = cKDTree(Z[idx]).query(Z, k=1)
    dist[idx] = -1.0
    sub = np.sort(np.argsort(dist, kind="stable")[:_RING * len(idx)])
    Zs, inc, ins = Z[sub], incumbent[sub], inside[sub]
    heavy = 2 * float(np.sum(wpos[sub] + wneg[sub]))  # more than every error inside together
    keep_pos, keep_neg = ~ins & inc, ~ins & ~inc
    res = solve_iis_cover(Zs, np.where(keep_pos, heavy, np.where(keep_neg, 0.0, wpos[sub])),
                          np.where(keep_neg, heavy, np.where(keep_pos, 0.0, wneg[sub])),
                          incumbent=inc, time_limit=seconds)
    return (_plane(Zs, res.positive), res.complete,
            res.stop_reason == StopReason.INTERRUPTED)


class _LocalSearch:
    """The state of :func:`improve_incumbent`: the instance, the best labeling found, its
    errors and plane, and the size of each fixed neighbourhood; its methods solve one move
    around the best labeling and keep what it finds."""

    def __init__(self, Z, wpos, wneg, best, value, m, rng):
        self.Z, self.wpos, self.wneg, self.m, self.rng = Z, wpos, wneg, m, rng
        self.n, self.dim = Z.shape
        self.best, self.value = best, value
        self.weight = wpos + wneg
        self.plane = _plane(Z, best)
        # each fixed neighbourhood's size: the band is the same points until the plane moves
        self.size = dict.fromkeys(("fixed band", "fixed ball"),
                                  min(self.n, _FIXED_POINTS_PER_DIM * self.dim))

    def solve_fixed(self, move, seconds):
        """Solve the neighbourhood of ``move`` (``"fixed band"``: the points nearest to the
        plane; ``"fixed ball"``: those nearest to an error drawn by its weight) with the other
        points' sides kept; returns what :func:`_solve_fixed` does."""
        Z, n = self.Z, self.n
        if move == "fixed band":
            centre = np.abs(Z @ self.plane[0] + self.plane[1])
        else:  # the points nearest to an error drawn by its weight
            wrong = np.where(self.best, self.wneg, self.wpos)
            centre = np.linalg.norm(Z - Z[self.rng.choice(n, p=wrong / wrong.sum())], axis=1)
        inside = np.zeros(n, dtype=bool)
        inside[np.argsort(centre, kind="stable")[:self.size[move]]] = True
        return _solve_fixed(Z, self.wpos, self.wneg, self.best, inside, seconds)

    def solve_subset(self, move, seconds):
        """Solve a subset of ``m`` points alone (``"band"``: the nearest to the plane;
        ``"sample"``: a weighted random sample): the max-margin plane of its best labeling (or
        None), and whether Ctrl-C stopped the solve."""
        Z, m = self.Z, self.m
        if move == "band":
            subset = np.argsort(np.abs(Z @ self.plane[0] + self.plane[1]), kind="stable")[:m]
        else:  # a weighted sample, so that heavy points are as likely as their samples
            subset = self.rng.choice(self.n, size=m, replace=False,
                                     p=self.weight / self.weight.sum())
        sub, interrupted = _solve_subset(Z[subset], self.wpos[subset], self.wneg[subset],
                                         self.best[subset], seconds)
        return _plane(Z[subset], sub), interrupted

    def accept(self, candidate) -> bool:
        """Whether the labeling of all the points by the plane ``candidate`` (or None) errs
        less than the best one; if so, it and its plane become the best."""
        if candidate is None:
            return False
        labels = self.Z @ candidate[0] + candidate[1] > 0
        errors = labeling_errors(labels, self.wpos, self.wneg)
        if errors < self.value:
            self.best, self.value, self.plane = labels, errors, candidate
            return True
        return False

    def resize(self, move, complete) -> bool:
        """Resize the neighbourhood of a fixed ``move`` that found nothing better: wider when
        its solve completed (proven locally optimal), narrower when it ran out of time.
        Whether the search is over: the whole instance was proven."""
        if complete and self.size[move] >= self.n:
            return True  # no plane does better (or a plane of the optimum that floating
            # point cannot realize: nothing to gain either)
        self.size[move] = min(self.n, int(1.5 * self.size[move])) if complete else max(
            min(self.n, _FIXED_MIN_PER_DIM * self.dim), int(self.size[move] / 1.5))
        return False


def improve_incumbent(
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    positive: np.ndarray,
    *,
    time_limit: float,
    patience: float | None = None,
    random_state: int | np.random.Generator | None = 0,
) -> tuple[np.ndarray, float, bool]:
    """Local search from the labeling ``positive`` (see the module docstring).

    Parameters
    ----------
    Z : (n, d) array of distinct points, in a well-conditioned frame.
    wpos, wneg : (n,) weights of the positive / negative samples at each point.
    positive : (n,) bool array
        The incumbent: a labeling realized by an affine classifier.
    time_limit : float
        Seconds; no subset solve starts after them.
    patience : float, optional
        Seconds without a better labeling after which the search stops (None: it goes on
        until ``time_limit`` or until its moves are exhausted).
    random_state : int, Generator or None
        Seeds the samples.

    Returns
    -------
    positive, value, interrupted
        The best labeling found (``positive`` itself if nothing beat it), its weighted
        errors, and whether Ctrl-C stopped the search.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(1500, 3))  # subsets of about 300 points
    >>> pos = Z[:, 0] + 0.3 * rng.normal(size=1500) > 0
    >>> start = Z[:, 1] > 0
    >>> better, value, _ = improve_incumbent(Z, pos * 1.0, ~pos * 1.0, start,
    ...                                      time_limit=2.0)
    >>> value < labeling_errors(start, pos * 1.0, ~pos * 1.0)
    True
    """
    t0 = time.perf_counter()
    deadline = t0 + time_limit
    rng = np.random.default_rng(random_state)
    n, dim = Z.shape
    best = np.asarray(positive, dtype=bool)
    value = labeling_errors(best, wpos, wneg)
    m = _subset_size(n, dim, _SLICE)
    if dim == 0 or m >= n:  # nothing to gain from subsets
        return best, value, False
    search = _LocalSearch(Z, wpos, wneg, best, value, m, rng)
    # the moves in turn: the band and a sample alone; above the enumeration's dimensions also
    # the band and a ball around an error with the other points' sides kept
    moves = ["band", "sample"] if dim < LARGE_NEIGHBOURHOODS_FROM else [
        "fixed band", "fixed ball", "sample"]
    turn = 0
    failed = 0  # moves in a row that did not improve
    last_better = t0
    while time.perf_counter() < deadline and failed < 2 * math.ceil(n / m) + 4:
        if search.value <= 0 or (patience is not None and
                                 time.perf_counter() - last_better > patience):
            break
        move = moves[turn % len(moves)]
        turn += 1
        if search.plane is None and move != "sample":
            continue
        fixed = move.startswith("fixed")
        seconds = min(_FIXED_SLICE if fixed else _SLICE, deadline - time.perf_counter())
        if seconds <= 0:
            break
        if fixed:
            candidate, complete, interrupted = search.solve_fixed(move, seconds)
        else:
            candidate, interrupted = search.solve_subset(move, seconds)
        improved = search.accept(candidate)
        if improved:
            failed, last_better = -1, time.perf_counter()
        if fixed and not improved and search.resize(move, complete):
            break
        failed += 1
        if interrupted:
            return search.best, search.value, True
    return search.best, search.value, False

def _run(Z, wpos, wneg, start, deadline, patience, seed):
    """One run of :func:`improve_from_starts` (a worker's job) until ``deadline``, a
    :func:`time.time` (a job may wait for its worker, and perf_counter's origin is the
    process's): its result and seconds."""
    t0 = time.perf_counter()
    out = improve_incumbent(Z, wpos, wneg, start, time_limit=max(deadline - time.time(), 0.0),
                            patience=patience, random_state=seed)
    return *out, time.perf_counter() - t0


def improve_from_starts(
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    starts: list[tuple[str, np.ndarray]],
    *,
    time_limit: float,
    n_jobs: int | None = None,
    random_state: int | np.random.Generator | None = 0,
    verbose: int = 0,
) -> tuple[np.ndarray, float, str, bool]:
    """Local searches (:func:`improve_incumbent`) from several labelings, on parallel
    workers, the best result kept.

    The search is a random walk among basins: from the best of the surrogates' labelings it
    may stall where a worse start goes on to a better plane: a start's errors do not tell
    which basin it leads to. So each run stops once
    it has found nothing better for :data:`_PATIENCE_SHARE` of ``time_limit`` (at least
    :data:`_MIN_PATIENCE` seconds), and the next start takes its worker; once every start
    has run, the searches go on from the best labeling found, with fresh random moves,
    until as many runs in a row as there are workers have not improved it. A run holds one
    core, so the workers (:func:`~exactclf._partition.solve_blocks`: processes, or a Dask
    cluster under ``joblib.parallel_config``) run that many starts at once.

    Parameters
    ----------
    Z, wpos, wneg
        As for :func:`improve_incumbent`.
    starts : list of (str, (n,) bool array)
        Named realized labelings, the first run first (fewest errors first is a good order).
    time_limit : float
        Seconds for all the runs together.
    n_jobs : int, optional
        Parallel workers (``-1``: all usable cores; None: one).
    random_state : int, Generator or None
        Seeds the runs' moves.
    verbose : int
        From 1, a line per run on stderr (its start, errors before and after, seconds).

    Returns
    -------
    positive, value, source, interrupted
        The best labeling found, its weighted errors, the name of the start it was found
        from, and whether Ctrl-C stopped the search.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(1500, 3))
    >>> pos = Z[:, 0] + 0.3 * rng.normal(size=1500) > 0
    >>> wpos, wneg = pos * 1.0, ~pos * 1.0
    >>> starts = [("x1 > 0", Z[:, 1] > 0), ("x2 > 0", Z[:, 2] > 0)]
    >>> best, value, source, _ = improve_from_starts(Z, wpos, wneg, starts, time_limit=2.0)
    >>> value < min(labeling_errors(p, wpos, wneg) for _, p in starts)
    True
    """
    deadline = time.time() + time_limit
    rng = np.random.default_rng(random_state)
    patience = max(_MIN_PATIENCE, _PATIENCE_SHARE * time_limit)
    workers = effective_workers(n_jobs)
    starts = [(name, np.asarray(p, dtype=bool)) for name, p in starts]
    # a constant labeling (the majority class) has no plane to move: no run of its own
    # when another start has one
    starts = [s for s in starts if s[1].any() and not s[1].all()] or starts
    errors = [labeling_errors(p, wpos, wneg) for _, p in starts]
    source, best = starts[int(np.argmin(errors))]
    state = {"best": best, "value": min(errors), "source": source, "stale": 0}
    runs = []  # (start's name, its labeling, whether from the best found) by job

    def jobs():
        queue = list(starts)
        while state["value"] > 0 and state["stale"] < workers:
            if time.time() >= deadline:
                return
            restart = not queue
            name, start = (state["source"], state["best"]) if restart else queue.pop(0)
            runs.append((name, start, restart))
            yield len(runs) - 1, _run, (Z, wpos, wneg, start, deadline, patience,
                                        int(rng.integers(2**32)))

    interrupted = False
    try:
        for k, (pos, value, interrupted, seconds) in solve_blocks(jobs(), n_jobs):
            name, start, restart = runs[k]
            if verbose:
                print(f"ICEClassifier: local search {'again ' if restart else ''}from "
                      f"{name}: {labeling_errors(start, wpos, wneg):g} -> {value:g} errors "
                      f"in {seconds:.3g} s", file=sys.stderr, flush=True)
            if value < state["value"]:
                state.update(best=pos, value=value, source=name, stale=0)
            elif restart:
                state["stale"] += 1
            if interrupted:
                break
    except KeyboardInterrupt:
        interrupted = True
    return state["best"], state["value"], state["source"], interrupted
