"""A portfolio of the two exact paths to the minimum 0-1 loss of an affine classifier.

Same instance as :func:`exactclf.linear._min01.solve_min01`. The paths are

- ``"exact"``: the enumeration (:func:`~exactclf.linear._min01.solve_min01`), which proves
  optimality only when it completes; its cost is predictable (``C(n, D)`` candidates);
- ``"iis_cover"``: the IIS cover (:class:`~exactclf.linear._iis.IISCoverSolver`), with a
  proven lower bound at every round; fast in high dimension or with few errors, its cost is
  not predictable.

:func:`solve_portfolio` runs incumbents first (surrogates, the big-M MILP when the
enumeration is large), then the path predicted cheapest (:func:`path_order`) for a slice
of time, then the other one for the same slice, doubling the slice at every turn until one
path proves its incumbent optimal or the bound from the IIS cover meets it. Both paths
share the incumbent: the IIS cover resumes where it stopped (cuts, bound), the enumeration
restarts from the best labeling found (the doubling bounds the time lost to restarts by
the time of the last run). When a budget stops the search before a proof and the IIS cover
gave no bound, the quick :func:`~exactclf.linear._bounds.lower_bound` runs in a reserved
share of the budget, so that a stopped fit always reports a proven bound.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, replace

import numpy as np

from .._backend import CPU, Backend
from .._certificate import StopReason
from .._combinatorics import MAX_RANK
from .._resources import effective_workers
from .._trace import FitTrace
from .._verification._tolerances import zero_one_rtol
from ._bounds import _IIS_FIRST_DIM, LowerBound, conflict_bound, lower_bound, partition_bound
from ._iis import IISCoverSolver
from ._incumbent import best_incumbent, incumbent_candidates
from ._local_cover import local_cover_bound
from ._local_search import LARGE_NEIGHBOURHOODS_FROM, improve_from_starts, worth_searching
from ._min01 import labeling_errors, search_size, solve_min01

__all__ = ["PortfolioResult", "enumeration_seconds", "path_order", "solve_portfolio"]

#: candidates per second and core assumed when estimating run times (a planning figure: the
#: real rate varies by an order of magnitude with how early the incumbent prunes)
RATE = 2e6
#: the enumeration's actual time is within about this factor of :func:`enumeration_seconds`
#: (either way: an early incumbent prunes more, a late one less)
_RATE_SLACK = 4.0
#: shortest slice of a path, seconds
_MIN_SLICE = 1.0
#: above this many candidates, the MILP incumbent pays for itself before an enumeration
MILP_INCUMBENT_ABOVE = 10**7
#: seconds given to the MILP incumbent without a time limit (a quarter of one with it)
MILP_INCUMBENT_SECONDS = 30.0
#: share of a time limit kept for the quick lower bound, used only if the search stops
_BOUND_SHARE = 0.1
#: seconds of quick lower bound after a stop by ``max_candidates``, as a share of the time
#: spent so far, and the limits of that time
_BOUND_SECONDS_MIN, _BOUND_SECONDS_MAX = 0.25, 2.0
#: beyond the exact range (the enumeration predicted to outlast the budget, or this many
#: seconds without one), shares of the budget for the local search of better incumbents and
#: for the local IIS cover bound, and their seconds without a time limit; where the search
#: has its large neighbourhoods (from :data:`LARGE_NEIGHBOURHOODS_FROM` dimensions) it gets
#: the larger shares, which it hands back when it stalls: there it keeps improving well into
#: them, where the IIS cover's rounds over so many points seldom find a better plane (see
#: benchmarks/results/table2_linear.txt)
_LOCAL_FROM_SECONDS = 60.0
_LOCAL_SEARCH_SHARE, _LOCAL_COVER_SHARE = 0.3, 0.3
_LARGE_SEARCH_SHARE, _LARGE_COVER_SHARE = 0.5, 0.2
_LOCAL_SEARCH_SECONDS, _LOCAL_COVER_SECONDS = 30.0, 20.0
#: beyond the exact range, the annealed sigmoid loss of both surrogates' planes stops after
#: this share of ``time_limit``: a fraction of a second on most data, its time grows with the
#: points and the dimension, so the largest data sets must not spend the budget on it
_ANNEAL_SHARE = 0.05
#: below :data:`_IIS_FIRST_DIM`, beyond the exact range, the partition bound on random
#: blocks takes the rest of the budget after the local search and a third of the local
#: cover's share (this share of it where the enumeration may still finish, and these
#: seconds without a time limit): there the errors of large data sets are spread through
#: the points and random blocks prove far more than covers of IISs of at most D + 2 points,
#: and the IIS cover's LPs over so many points outlast their turn; from D = 5 the IIS
#: covers win: the blocks the enumeration can solve there are small and fit their noise
_RANDOM_PARTITION_SHARE, _RANDOM_PARTITION_SECONDS = 0.3, 30.0
#: from this dimension on, beyond the exact range, the MILP incumbent gets half the budget
#: and the local cover a third of its share: there the MILP finds better planes than the
#: local search from the surrogates, and the IISs, of up to D + 2 points, give weak covers
_HIGH_DIM = 9
_HIGH_DIM_MILP_SHARE = 0.5
#: from :data:`_HIGH_DIM` on, when the IIS cover goes first and does not prove within twice
#: this many seconds (a fifth of a time limit), the big-M MILP gets a turn of this many (a
#: tenth of it) for an incumbent: on a few hundred points in high dimension HiGHS often
#: finds within seconds planes that the cover's peeling reaches much later or never, while
#: the cover alone proves most such instances within the wait, where a turn would only delay
#: it (benchmarks/results/ice_vs_baselines.txt). No turn when the cover's gap is at most
#: ``_MILP_TURN_GAP`` by then: a better incumbent could only close that gap, and a turn there
#: mostly finds the cover's incumbent again and delays the proof by its length
_MILP_TURN_SECONDS = 5.0
_MILP_TURN_GAP = 0.1
#: when the IIS cover runs alone to a time limit, this share of its time (at most these
#: seconds) is kept for the LP relaxation of its master over the IISs of its last rounds
_FINAL_LP_SHARE, _FINAL_LP_SECONDS = 0.1, 5.0
#: without a time limit, an enumeration predicted to outlast this even at its best rate
#: (``_RATE_SLACK`` times the planning rate) gets no turns: the IIS cover, exact as well,
#: runs alone
_HOPELESS_SECONDS = 86400.0
#: the stage name of each path's turn in a fit's trace
_PATH_STAGES = {"exact": "enumeration", "iis_cover": "IIS cover"}


@dataclass(kw_only=True)
class PortfolioResult:
    """Outcome of :func:`solve_portfolio`.

    ``positive`` is a realized labeling of the points with weighted errors ``value``;
    ``lower_bound`` (obtained by ``lower_bound_method``) is proven; ``complete`` says that
    ``value`` is proven optimal, by ``method`` (when incomplete: the path that found the
    returned labeling, or the first path). ``stop_reason``: ``"time_limit"``,
    ``"max_candidates"``, ``"interrupted"``, ``"numerical"`` or ``"master failed"`` when
    incomplete. ``n_candidates`` counts the candidates of the enumeration's longest run;
    ``upper_bound`` / ``upper_bound_source`` describe the incumbent the paths started from.
    ``iis``: when the IIS cover proved ``lower_bound``, the IISs it rests on (arrays of point
    indices, each point labeled by its heavier weight); None otherwise. ``farkas``: the
    exact multipliers of those of them found on ``U`` (:meth:`IISCoverSolver.farkas`).
    """

    positive: np.ndarray
    value: float
    lower_bound: float
    lower_bound_method: str
    complete: bool
    method: str
    stop_reason: str | None
    n_candidates: int
    upper_bound: float
    upper_bound_source: str
    iis: list[np.ndarray] | None = None
    farkas: dict | None = None


def enumeration_seconds(total: int, n_jobs: int | None) -> float:
    """Predicted seconds of an enumeration of ``total`` candidates with ``n_jobs`` workers
    (the cores that really run in parallel: ``n_jobs=100`` on 2 cores is 2 workers)."""
    return total / (RATE * effective_workers(n_jobs))


def path_order(method: str, dim: int, total: int, n_jobs: int | None,
               time_limit: float | None = None) -> list[str]:
    """The paths ``method`` runs, the one predicted cheapest first.

    ``"auto"``: the IIS cover first from dimension :data:`_IIS_FIRST_DIM` on, unless the
    enumeration is predicted to take less than a slice (measured on the benchmark of
    ``benchmarks/ice_vs_baselines.py``: from D = 5 the cover proves every instance first);
    below, the enumeration first. The enumeration is left out, in any dimension, where it
    cannot complete: beyond its addressable ranks, or predicted to outlast ``time_limit``
    (without one, :data:`_HOPELESS_SECONDS`) even at its best rate (a stopped enumeration
    restarts, so its slices would be lost).

    Examples
    --------
    >>> path_order("auto", 6, 10**9, 1), path_order("auto", 3, 10**9, 1)
    (['iis_cover', 'exact'], ['exact', 'iis_cover'])
    >>> path_order("auto", 6, 10**11, 1, time_limit=60), path_order("auto", 6, 10**11, 1)
    (['iis_cover'], ['iis_cover', 'exact'])
    >>> path_order("exact", 6, 10**9, 1), path_order("auto", 2, 10**20, 1)
    (['exact'], ['iis_cover'])
    >>> path_order("auto", 3, 10**13, 1, time_limit=60)
    ['iis_cover']
    """
    if method != "auto":
        return [method]
    seconds = enumeration_seconds(total, n_jobs)
    horizon = _HOPELESS_SECONDS if time_limit is None else time_limit
    if total > MAX_RANK or seconds / _RATE_SLACK > horizon:
        return ["iis_cover"]
    if dim < _IIS_FIRST_DIM or seconds <= _MIN_SLICE:
        return ["exact", "iis_cover"]
    return ["iis_cover", "exact"]


def _first_slice(path: str, total: int, n_jobs: int | None) -> float:
    """The first path's first slice: the enumeration's prediction with its slack (it
    restarts when stopped, so a short slice is lost), or for the IIS cover the time the
    enumeration would need at its best."""
    predicted = enumeration_seconds(total, n_jobs)
    factor = _RATE_SLACK if path == "exact" else 1 / _RATE_SLACK
    return max(_MIN_SLICE, factor * predicted)


def solve_portfolio(
    U: np.ndarray,
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    *,
    method: str = "auto",
    upper_bound: str = "auto",
    backend: Backend = CPU,
    max_candidates: int | None = None,
    time_limit: float | None = None,
    n_jobs: int | None = None,
    verbose: int = 0,
    incumbent: np.ndarray | None = None,
    mip_solver: str = "highs",
    trace: FitTrace | None = None,
) -> PortfolioResult:
    """Minimize the weighted 0-1 loss of an affine classifier by the paths of ``method``.

    Parameters
    ----------
    U : (n, d) array of distinct points (the enumeration's coordinates).
    Z : (n, d') array, the same points in a well-conditioned frame (the IIS cover's and the
        incumbents' coordinates).
    wpos, wneg : (n,) weights of the positive / negative samples at each point.
    method : {"auto", "exact", "iis_cover"}
        The paths (:func:`path_order`).
    upper_bound : {"auto", "surrogate", "milp"}
        Incumbents run first: the majority class, LinearSVC and LogisticRegression, plus the
        big-M MILP (``"milp"``; ``"auto"``: when the enumeration goes first and has more than
        :data:`MILP_INCUMBENT_ABOVE` candidates), for at most
        :data:`MILP_INCUMBENT_SECONDS` (a quarter of ``time_limit``).
    backend : Backend
        The enumeration's backend.
    max_candidates : int, optional
        Budget of every run of the enumeration; the portfolio stops when it is reached.
    time_limit : float, optional
        Seconds for the whole portfolio (until the IIS cover runs, a tenth is kept for a
        quick lower bound if the search stops early).
    n_jobs, verbose
        See :func:`~exactclf.linear._min01.solve_min01`.
    incumbent : (n,) bool array, optional
        A realized labeling to go on from (an earlier result's ``positive``), in place of
        the incumbents of ``upper_bound``: a second run with more time then continues the
        first one's local search instead of starting it again.
    mip_solver : {"highs", "gurobi", "auto"}
        The solver of the IIS cover's master (:class:`~exactclf.linear._cover.CoverModel`).
    trace : FitTrace, optional
        Records a row per stage run (the incumbents, the local search and bounds beyond the
        exact range, each turn of a path, the quick bound).

    Returns
    -------
    PortfolioResult

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> wpos = np.array([0, 1, 0, 1.0])
    >>> res = solve_portfolio(Z, Z, wpos, 1 - wpos)
    >>> res.value, res.lower_bound, res.complete, res.method
    (1.0, 1.0, True, 'exact')
    """
    t0 = time.perf_counter()
    trace = trace or FitTrace(t0)
    deadline = math.inf if time_limit is None else t0 + time_limit
    reserve = 0.0 if time_limit is None else _BOUND_SHARE * time_limit
    dim = Z.shape[1]
    total = search_size(len(U), dim) if dim else 0
    order = path_order(method, dim, total, n_jobs, time_limit)
    predicted = enumeration_seconds(total, n_jobs)
    # beyond the exact range: the enumeration would outlast the budget on a large instance
    beyond = worth_searching(len(Z), dim) and predicted > min(
        _LOCAL_FROM_SECONDS, math.inf if time_limit is None else time_limit)
    use_milp = upper_bound == "milp" or (upper_bound == "auto" and (
        beyond or (order[0] == "exact" and total > MILP_INCUMBENT_ABOVE)))
    milp_seconds = None
    if use_milp:
        milp_seconds = MILP_INCUMBENT_SECONDS
        if time_limit is not None and beyond and dim >= _HIGH_DIM:
            milp_seconds = _HIGH_DIM_MILP_SHARE * time_limit
        elif time_limit is not None:
            # beyond the exact range in low dimension the local search uses time better
            milp_seconds = min(milp_seconds, (0.1 if beyond else 0.25) * time_limit)
    # the MILP's turn inside the IIS cover's first one (when the MILP did not run already)
    milp_due = order[0] == "iis_cover" and dim >= _HIGH_DIM and upper_bound == "auto" and (
        not use_milp)
    # beyond the exact range, the one-unit networks too (their half-spaces can fit the 0-1
    # loss far better than the surrogates')
    t_stage = time.perf_counter()
    if incumbent is None:
        t_inc = time.perf_counter()
        cands, interrupted = incumbent_candidates(
            Z, wpos, wneg, milp_time_limit=milp_seconds, networks=beyond, anneal=beyond,
            anneal_seconds=None if time_limit is None else _ANNEAL_SHARE * time_limit,
            original=U, n_jobs=n_jobs)
        source, best_pos, best = cands[0]
        # the networks' (and surrogates') time comes out of the local search's share
        fitted = time.perf_counter() - t_inc - (milp_seconds or 0.0)
    else:
        best_pos, interrupted, fitted = np.asarray(incumbent, dtype=bool), False, 0.0
        best, source = labeling_errors(best_pos, wpos, wneg), "the given labeling"
        cands = [(source, best_pos, best)]
    bound = conflict_bound(wpos, wneg)
    trace.record(f"incumbents ({source})", t_stage, best, bound.value,
                 StopReason.INTERRUPTED if interrupted else "done")
    local_cuts = None  # the IISs of the bound when it is the local cover's
    seed = None  # the local cover, whose IISs and bound start the IIS cover
    bounded_beyond = False  # the local cover (and partitions) ran: no quick bound after
    if beyond and not interrupted:
        # the partitions take the rest of the budget unless the enumeration may still
        # finish in it (it then gets the time after their share)
        partitions = None if "exact" not in order else _RANDOM_PARTITION_SHARE
        t_stage = time.perf_counter()
        best_pos, best, source, interrupted, local, blocks = _beyond_exact_range(
            Z, wpos, wneg, cands, time_limit, deadline, partitions, max(fitted, 0.0), n_jobs,
            verbose)
        bounded_beyond = local is not None
        if local is not None and local.value > bound.value:
            bound, local_cuts, seed = local, local.cuts, local
        if blocks is not None and blocks.value > bound.value:
            bound, local_cuts = blocks, None
        trace.record("local search and bounds", t_stage, best, bound.value,
                     StopReason.INTERRUPTED if interrupted else "done")
    ub = best
    if verbose:
        print(f"ICEClassifier: {len(U)} unique points in dimension {dim}, {total:.4g} "
              f"candidates; incumbent {best:g} errors ({source}); paths {' then '.join(order)}",
              file=sys.stderr, flush=True)
    found_by = order[0]
    proven_by = None
    exhausted = False  # the enumeration completed
    stop_reason = StopReason.INTERRUPTED if interrupted else None
    n_cand = 0
    iis = None
    iis_bound = False  # the bound is the IIS cover's
    active = list(order)
    slice_ = _first_slice(order[0], total, n_jobs)
    rtol = zero_one_rtol("iis_cover", np.r_[wpos, wneg])

    def proven() -> bool:
        # exact for integer weights; otherwise relative to the value itself (weights may
        # have any units)
        return best - bound.value <= rtol * abs(best)

    while active and stop_reason is None and proven_by is None:
        for path in list(active):
            # the reserve is for the quick bound, kept until the IIS cover proves more
            # than the conflicting duplicates
            left = deadline - (0.0 if iis_bound else reserve) - time.perf_counter()
            if left <= 0:
                stop_reason = StopReason.TIME_LIMIT
                break
            seconds = min(slice_, left) if len(active) > 1 else (
                None if time_limit is None else left)
            t_stage = time.perf_counter()
            if path == "iis_cover":
                if iis is None:
                    t_setup = time.perf_counter()
                    # verified on U first: the certificate's witness reuses the multipliers
                    iis = IISCoverSolver(Z, wpos, wneg, incumbent=best_pos, samples=U,
                                         mip_solver=mip_solver, verbose=verbose)
                    # the local cover's IISs, and its bound if they all hold on the samples
                    if seed is not None and iis.add_cuts(seed.cuts):
                        iis.raise_bound(seed.value)
                    if seconds is not None:
                        # the set-up (thousands of exact checks) comes out of the turn
                        seconds = max(seconds - (time.perf_counter() - t_setup), 1e-3)
                else:
                    iis.offer(best_pos)
                lp_reserve = (0.0 if seconds is None or len(active) > 1 else
                              min(_FINAL_LP_SHARE * seconds, _FINAL_LP_SECONDS))
                if milp_due:
                    milp_due = False
                    res = _iis_turn_with_milp(iis, Z, wpos, wneg, seconds, time_limit,
                                              n_jobs, verbose, lp_reserve)
                else:
                    res = iis.run(seconds, lp_reserve)
                if res.lower_bound > bound.value:
                    bound = LowerBound(res.lower_bound, "IIS cover (Benders master)")
                    iis_bound = True
                if res.complete:
                    proven_by, bound.method, iis_bound = path, "IIS cover", True
                elif res.stop_reason == StopReason.INTERRUPTED:
                    stop_reason = StopReason.INTERRUPTED
                elif res.stop_reason != StopReason.TIME_LIMIT:
                    active.remove(path)  # floating point or the MIP failed: no progress here
                    if not active:
                        # the cover's incumbent may be far from the optimum: the big-M
                        # MILP, which degenerate points do not stop, in the time left
                        res = _milp_after_the_cover(res, Z, wpos, wneg, deadline, n_jobs)
                    stop_reason = res.stop_reason if not active else None
                elif len(active) == 1:
                    stop_reason = StopReason.TIME_LIMIT
            else:
                res = solve_min01(U, wpos, wneg, incumbent=best_pos, backend=backend,
                                  max_candidates=max_candidates, time_limit=seconds,
                                  n_jobs=n_jobs, verbose=verbose)
                n_cand = max(n_cand, res.n_candidates)
                if res.complete:
                    proven_by, exhausted = path, True
                elif res.stop_reason != StopReason.TIME_LIMIT or len(active) == 1:
                    stop_reason = res.stop_reason  # the budget, or Ctrl-C
            if res.value < best:
                best_pos, best, found_by = res.positive, res.value, path
            if proven_by is None and proven():
                # the incumbent meets a bound: the IIS cover's, or the conflicts' alone
                proven_by = "iis_cover" if iis is not None else found_by
            trace.record(_PATH_STAGES[path], t_stage, best, best if exhausted else bound.value,
                         "proven" if proven_by is not None
                         else stop_reason or res.stop_reason or "slice")
            if proven_by is not None or stop_reason is not None:
                break
        slice_ *= 2

    if exhausted:
        bound = LowerBound(best, "exhaustive search")
        iis_bound, local_cuts = False, None
    elif (proven_by is None and stop_reason != StopReason.INTERRUPTED and not iis_bound
          and not bounded_beyond):
        # a budget stop with no bound but the conflicts (an IIS cover stopped before its
        # bound rose; beyond the exact range, the local cover and partitions ran instead):
        # the quick bound, in the reserve
        t_stage = time.perf_counter()
        elapsed = t_stage - t0
        seconds = (reserve if time_limit is not None else
                   min(max(0.1 * elapsed, _BOUND_SECONDS_MIN), _BOUND_SECONDS_MAX))
        quick = lower_bound(Z, wpos, wneg, time_limit=max(seconds, 1e-3),
                            incumbent=best_pos, n_jobs=n_jobs)
        if quick.value > bound.value:
            bound, local_cuts = quick, None
        if quick.interrupted:
            stop_reason = StopReason.INTERRUPTED
        trace.record("quick bound", t_stage, best, bound.value,
                     StopReason.INTERRUPTED if quick.interrupted else "done")
    value = labeling_errors(best_pos, wpos, wneg)
    return PortfolioResult(
        positive=best_pos, value=value, lower_bound=min(bound.value, value),
        lower_bound_method=bound.method, complete=proven_by is not None,
        method=proven_by or found_by, stop_reason=stop_reason, n_candidates=n_cand,
        upper_bound=ub, upper_bound_source=source,
        iis=iis.cut_sets() if iis_bound else local_cuts,
        farkas=iis.farkas() if iis_bound else None)


def _milp_after_the_cover(res, Z, wpos, wneg, deadline, n_jobs):
    """The IIS cover's result ``res``, its labeling replaced by the big-M MILP's when that
    errs less. The MILP runs until the ``deadline`` (the fit's budget is spent on the
    incumbent once no bound can grow), or :data:`MILP_INCUMBENT_SECONDS` without one."""
    seconds = (MILP_INCUMBENT_SECONDS if math.isinf(deadline)
               else deadline - time.perf_counter())
    if seconds <= 0:
        return res
    pos, value, _, interrupted = best_incumbent(Z, wpos, wneg, surrogate=False,
                                                milp_time_limit=seconds, n_jobs=n_jobs)
    if value < res.value:
        res = replace(res, positive=pos, value=value)
    return replace(res, stop_reason=StopReason.INTERRUPTED) if interrupted else res


def _iis_turn_with_milp(iis, Z, wpos, wneg, seconds, time_limit, n_jobs, verbose,
                        reserve=0.0):
    """The IIS cover's first turn of ``seconds`` (None: no limit), with a turn of the big-M
    MILP after twice :data:`_MILP_TURN_SECONDS` if the cover's gap is still above
    :data:`_MILP_TURN_GAP` then: the MILP's plane is offered to the cover as an incumbent
    (its bound, with bounded weights, is not the 0-1 loss's). The cover's last run keeps
    ``reserve`` seconds for its master's LP relaxation. Returns the cover's result (stopped
    by ``"interrupted"`` if Ctrl-C stopped the MILP)."""
    t0 = time.perf_counter()

    def rest():
        return math.inf if seconds is None else seconds - (time.perf_counter() - t0)

    turn = _MILP_TURN_SECONDS if time_limit is None else min(_MILP_TURN_SECONDS,
                                                             0.1 * time_limit)
    res = iis.run(min(rest(), 2 * turn))
    if res.stop_reason != StopReason.TIME_LIMIT or rest() <= 0:
        return res
    if res.value - res.lower_bound > _MILP_TURN_GAP * res.value:
        pos, value, _, interrupted = best_incumbent(
            Z, wpos, wneg, surrogate=False, milp_time_limit=max(min(turn, rest()), 1e-3),
            n_jobs=n_jobs)
        if verbose:
            print(f"ICEClassifier: big-M MILP turn: {value:g} errors (IIS cover at "
                  f"{res.value:g})", file=sys.stderr, flush=True)
        if value < res.value:
            iis.offer(pos)
        if interrupted:
            return replace(iis.run(0.0), stop_reason=StopReason.INTERRUPTED)
    return iis.run(None if seconds is None else max(rest(), 1e-3), reserve)


def _beyond_exact_range(Z, wpos, wneg, cands, time_limit, deadline, partitions, spent,
                        n_jobs, verbose):
    """Beyond the exact range: the local search from the incumbents ``cands`` (``(source,
    positive, errors)``, the best first; :func:`improve_from_starts`, in its share of
    ``time_limit``, less the ``spent`` seconds of the incumbents' networks), then the local
    IIS cover bound around its errors (in its share) and, below :data:`_IIS_FIRST_DIM`, the
    partition bound on random blocks in the ``partitions`` share of ``time_limit`` (None:
    until the ``deadline``). Returns the incumbent ``(positive, errors, source,
    interrupted)`` and the two bounds (None where Ctrl-C came first or not run)."""
    def seconds(share, default):
        return default if time_limit is None else share * time_limit

    dim = Z.shape[1]
    large = dim >= LARGE_NEIGHBOURHOODS_FROM
    search = (_LARGE_SEARCH_SHARE if large else _LOCAL_SEARCH_SHARE) * (
        0.5 if dim >= _HIGH_DIM else 1)
    source, best_pos, best = cands[0]
    pos, value, start, interrupted = improve_from_starts(
        Z, wpos, wneg, [(name, positive) for name, positive, _ in cands],
        time_limit=max(seconds(search, _LOCAL_SEARCH_SECONDS) - spent, 0.0), n_jobs=n_jobs,
        verbose=verbose)
    if value < best:
        best_pos, best, source = pos, value, f"local search from {start}"
    if interrupted:
        return best_pos, best, source, True, None, None
    random = dim < _IIS_FIRST_DIM
    share = (_LARGE_COVER_SHARE if large else _LOCAL_COVER_SHARE) / (
        3 if dim >= _HIGH_DIM or random else 1)
    local = local_cover_bound(Z, wpos, wneg, anchors=best_pos != (wpos > wneg),
                              time_limit=seconds(share, _LOCAL_COVER_SECONDS))
    if verbose:
        print(f"ICEClassifier: beyond the exact range: local search {best:g} errors, local "
              f"IIS cover bound {local.value:g} ({len(local.cuts)} IISs, "
              f"{local.elapsed:.3g} s)", file=sys.stderr, flush=True)
    if not random or local.interrupted:
        return best_pos, best, source, local.interrupted, local, None
    blocks = partition_bound(
        Z, wpos, wneg, blocks="random", incumbent=best_pos, n_jobs=n_jobs,
        time_limit=(_RANDOM_PARTITION_SECONDS if time_limit is None
                    else partitions * time_limit if partitions is not None
                    else max(deadline - time.perf_counter(), 1e-3)))
    if verbose:
        print(f"ICEClassifier: {blocks.method}: bound {blocks.value:g} "
              f"({blocks.elapsed:.3g} s)", file=sys.stderr, flush=True)
    return best_pos, best, source, blocks.interrupted, local, blocks
