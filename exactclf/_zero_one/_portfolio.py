"""A portfolio of the two exact paths to the minimum 0-1 loss of an affine classifier.

Same instance as :func:`exactclf._zero_one._min01.solve_min01`. The paths are

- ``"exact"``: the enumeration (:func:`~exactclf._zero_one._min01.solve_min01`), which proves
  optimality only when it completes; its cost is predictable (``C(n, D)`` candidates);
- ``"iis_cover"``: the IIS cover (:class:`~exactclf._zero_one._iis.IISCoverSolver`), with a
  proven lower bound at every round; fast in high dimension or with few errors, its cost is
  not predictable.

:func:`solve_portfolio` runs incumbents first (surrogates, the big-M MILP when the
enumeration is large), then the path predicted cheapest (:func:`path_order`) for a slice
of time, then the other one for the same slice, doubling the slice at every turn until one
path proves its incumbent optimal or the bound from the IIS cover meets it. Both paths
share the incumbent: the IIS cover resumes where it stopped (cuts, bound), the enumeration
restarts from the best labeling found (the doubling bounds the time lost to restarts by
the time of the last run). When a budget stops the search before a proof and the IIS cover
gave no bound, the quick :func:`~exactclf._zero_one._bounds.lower_bound` runs in a reserved
share of the budget, so that a stopped fit always reports a proven bound.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, replace

import numpy as np

from .._backend import CPU, Backend
from .._budget import LONGEST_SEARCH, Budget, at_least
from .._certificate import BoundMethod, StopReason
from .._combinatorics import MAX_RANK
from .._resources import effective_workers
from .._stages import Stage, enabled
from .._trace import FitTrace
from .._verification._tolerances import zero_one_rtol
from ._bounds import _IIS_FIRST_DIM, LowerBound, conflict_bound, lower_bound, partition_bound
from ._iis import IISCoverSolver
from ._incumbent import best_incumbent, incumbent_candidates
from ._local_cover import local_cover_bound
from ._local_search import LARGE_NEIGHBOURHOODS_FROM, improve_from_starts, worth_searching
from ._min01 import RATE, labeling_errors, search_size, solve_min01

__all__ = ["LinearPlan", "PortfolioResult", "enumeration_seconds", "path_order", "plan_linear",
           "solve_portfolio"]

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
#: the stage name of each path's turn in a fit's trace
_PATH_STAGES = {"exact": Stage.ENUMERATION, "iis_cover": Stage.IIS_COVER}


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
    (without one, :data:`~exactclf._budget.LONGEST_SEARCH`) even at its best rate (a
    stopped enumeration restarts, so its slices would be lost).

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
    horizon = LONGEST_SEARCH if time_limit is None else time_limit
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



@dataclass(frozen=True)
class LinearPlan:
    """The schedule of one fit, decided before it starts from the instance's size and the
    budget (:func:`plan_linear`): which stages run, in what order and with what seconds.

    ``paths``: the proof paths in the order they take turns (:func:`path_order`);
    ``beyond``: the enumeration would outlast the budget on a large instance, so the local
    search and the local bounds run before the paths; ``milp_seconds``: the big-M MILP
    incumbent's time (None: it does not run); ``milp_turn``: the MILP gets a turn inside the
    IIS cover's first one; ``networks`` / ``anneal``: the one-unit networks and the annealed
    sigmoid loss join the incumbents; ``local``: the stages that run beyond the exact range
    before the paths (the local search, the local IIS cover and, below
    :data:`_IIS_FIRST_DIM`, the random partition bound); ``partition_share``: the random
    partition bound's share of the budget (None: until the deadline).
    """

    paths: tuple[str, ...]
    beyond: bool
    milp_seconds: float | None
    milp_turn: bool
    networks: bool
    anneal: bool
    local: tuple[Stage, ...]
    partition_share: float | None

    def stages(self) -> list[Stage]:
        """The stages this plan may run, in order (a stage also needs what comes before it
        to leave time and no proof)."""
        planned = [Stage.INCUMBENTS]
        planned += [Stage.ANNEALED_SIGMOID] if self.anneal else []
        planned += [Stage.MILP_INCUMBENT] if self.milp_seconds is not None else []
        planned += [Stage.ONE_UNIT_NETWORKS] if self.networks else []
        planned += list(self.local)
        planned += [_PATH_STAGES[p] for p in self.paths]
        planned += [Stage.MILP_TURN] if self.milp_turn else []
        planned += [Stage.FINAL_LP] if "iis_cover" in self.paths else []
        return planned + [Stage.QUICK_BOUND]


def plan_linear(n: int, dim: int, total: int, *, method: str = "auto",
                upper_bound: str = "auto", time_limit: float | None = None,
                n_jobs: int | None = None) -> LinearPlan:
    """The schedule of :func:`solve_portfolio` on ``n`` points in dimension ``dim`` with
    ``total`` enumeration candidates: the policy, on one screen. Stages left out by
    :func:`~exactclf._stages.ablated` are not planned.

    Examples
    --------
    >>> plan_linear(300, 3, 4_455_100).stages()
    [<Stage.INCUMBENTS: 'incumbents'>, <Stage.ENUMERATION: 'enumeration'>, \
<Stage.IIS_COVER: 'IIS cover'>, <Stage.FINAL_LP: 'final LP relaxation'>, \
<Stage.QUICK_BOUND: 'quick bound'>]
    >>> plan_linear(50_000, 3, 2 * 10**13, time_limit=60).beyond
    True
    """
    order = path_order(method, dim, total, n_jobs, time_limit)
    first = order[0]  # the turns' order as planned, whatever is ablated
    paths = tuple(p for p in order if enabled(_PATH_STAGES[p]))
    predicted = enumeration_seconds(total, n_jobs)
    # beyond the exact range: the enumeration would outlast the budget on a large instance
    beyond = worth_searching(n, dim) and predicted > min(
        _LOCAL_FROM_SECONDS, math.inf if time_limit is None else time_limit)
    local = (Stage.LOCAL_SEARCH, Stage.LOCAL_COVER) + (
        (Stage.RANDOM_PARTITION,) if dim < _IIS_FIRST_DIM else ())
    use_milp = upper_bound == "milp" or (upper_bound == "auto" and (
        beyond or (first == "exact" and total > MILP_INCUMBENT_ABOVE)))
    milp_seconds = None
    if use_milp and enabled(Stage.MILP_INCUMBENT):
        milp_seconds = MILP_INCUMBENT_SECONDS
        if time_limit is not None and beyond and dim >= _HIGH_DIM:
            milp_seconds = _HIGH_DIM_MILP_SHARE * time_limit
        elif time_limit is not None:
            # beyond the exact range in low dimension the local search uses time better
            milp_seconds = min(milp_seconds, (0.1 if beyond else 0.25) * time_limit)
    return LinearPlan(
        paths=paths, beyond=beyond, milp_seconds=milp_seconds,
        # the MILP's turn inside the IIS cover's first one, where it did not run already
        milp_turn=(first == "iis_cover" and dim >= _HIGH_DIM and upper_bound == "auto"
                   and not use_milp and enabled(Stage.MILP_TURN)),
        # beyond the exact range the one-unit networks' half-spaces can fit the 0-1 loss
        # far better than the surrogates', and the annealed sigmoid improves on both
        networks=beyond and enabled(Stage.ONE_UNIT_NETWORKS),
        anneal=beyond and enabled(Stage.ANNEALED_SIGMOID),
        local=tuple(s for s in local if beyond and enabled(s)),
        # the partitions take the rest of the budget unless the enumeration may still
        # finish in it (it then gets the time after their share)
        partition_share=None if "exact" not in paths else _RANDOM_PARTITION_SHARE)


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
    """Minimize the weighted 0-1 loss of an affine classifier by the stages of
    :func:`plan_linear`.

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
        See :func:`~exactclf._zero_one._min01.solve_min01`.
    incumbent : (n,) bool array, optional
        A realized labeling to go on from (an earlier result's ``positive``), in place of
        the incumbents of ``upper_bound``: a second run with more time then continues the
        first one's local search instead of starting it again.
    mip_solver : {"highs", "gurobi", "auto"}
        The solver of the IIS cover's master (:class:`~exactclf._zero_one._cover.CoverModel`).
    trace : FitTrace, optional
        Records a row per stage run.

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
    dim = Z.shape[1]
    total = search_size(len(U), dim) if dim else 0
    plan = plan_linear(len(Z), dim, total, method=method, upper_bound=upper_bound,
                       time_limit=time_limit, n_jobs=n_jobs)
    run = _Portfolio(U, Z, wpos, wneg, plan, Budget(time_limit), trace, total=total,
                     backend=backend, max_candidates=max_candidates, n_jobs=n_jobs,
                     verbose=verbose, mip_solver=mip_solver)
    if incumbent is None:
        run.incumbents()
    else:
        run.take_given(incumbent)
    if plan.beyond and run.stop_reason is None:
        run.beyond_exact_range()
    run.say_start()
    run.paths()
    run.quick_bound()
    return run.result()


class _Portfolio:
    """The state of one :func:`solve_portfolio` run: the incumbent (``best_pos``, ``best``,
    ``source``), the proven ``bound`` with the IISs that prove it, the IIS cover once
    started, and why the run stopped; each method is one stage of the plan."""

    def __init__(self, U, Z, wpos, wneg, plan: LinearPlan, budget: Budget, trace, *, total,
                 backend, max_candidates, n_jobs, verbose, mip_solver):
        self.U, self.Z, self.wpos, self.wneg = U, Z, wpos, wneg
        self.plan, self.budget, self.total = plan, budget, total
        self.trace = trace or FitTrace(budget.start)
        self.backend, self.max_candidates = backend, max_candidates
        self.n_jobs, self.verbose, self.mip_solver = n_jobs, verbose, mip_solver
        # a tenth of a time limit is kept for the quick bound (see paths())
        self.reserve = budget.share(_BOUND_SHARE, default=0.0)
        self.bound = conflict_bound(wpos, wneg)
        self.cands: list = []
        self.fitted = 0.0  # the incumbents' seconds, out of the local search's share
        self.local_cuts = None  # the IISs of the bound when it is the local cover's
        self.seed = None  # the local cover, whose IISs and bound start the IIS cover
        self.bounded_beyond = False  # a bound beyond the exact range ran: no quick bound
        self.stop_reason: str | None = None
        self.iis = None
        self.iis_bound = False  # the bound is the IIS cover's
        self.proven_by: str | None = None
        self.milp_turn_due = plan.milp_turn  # the MILP's turn, inside the cover's first
        self.exhausted = False  # the enumeration completed
        self.n_cand = 0
        self.found_by = plan.paths[0] if plan.paths else "iis_cover"
        self.rtol = zero_one_rtol("iis_cover", np.r_[wpos, wneg])

    # -- incumbents --------------------------------------------------------------------------

    def incumbents(self) -> None:
        """The majority class and the surrogates' planes (with the annealed sigmoid loss
        where planned), then the big-M MILP and the one-unit networks where planned: one
        trace row each, ranked together (ties to the first tried)."""
        plan, Z, wpos, wneg = self.plan, self.Z, self.wpos, self.wneg
        steps = [(Stage.INCUMBENTS, dict(anneal=plan.anneal, anneal_seconds=self.budget.share(
            _ANNEAL_SHARE)))]
        if plan.milp_seconds is not None:
            steps.append((Stage.MILP_INCUMBENT, dict(surrogate=False,
                                                     milp_time_limit=plan.milp_seconds)))
        if plan.networks:
            steps.append((Stage.ONE_UNIT_NETWORKS, dict(surrogate=False, networks=True,
                                                        original=self.U)))
        ranked: list = []
        for stage, kwargs in steps:
            started = time.perf_counter()
            cands, interrupted = incumbent_candidates(Z, wpos, wneg, n_jobs=self.n_jobs,
                                                      **kwargs)
            ranked = _ranked(ranked + cands)
            if stage != Stage.MILP_INCUMBENT:
                self.fitted += time.perf_counter() - started
            self.cands = ranked
            self.source, self.best_pos, self.best = ranked[0]
            name = f"{stage} ({self.source})" if stage == Stage.INCUMBENTS else stage
            self._record(name, started, StopReason.INTERRUPTED if interrupted else "done")
            if interrupted:
                self.stop_reason = StopReason.INTERRUPTED
                break
        self.upper, self.upper_source = self.best, self.source

    def take_given(self, incumbent) -> None:
        """A labeling given by the caller, in place of the incumbents."""
        self.best_pos = np.asarray(incumbent, dtype=bool)
        self.best = labeling_errors(self.best_pos, self.wpos, self.wneg)
        self.source = "the given labeling"
        self.cands = [(self.source, self.best_pos, self.best)]
        self._record(f"{Stage.INCUMBENTS} ({self.source})", time.perf_counter(), "done")
        self.upper, self.upper_source = self.best, self.source

    # -- beyond the exact range ----------------------------------------------------------------

    def beyond_exact_range(self) -> None:
        """The local search from the incumbents, then the local IIS cover bound around its
        errors and, below :data:`_IIS_FIRST_DIM`, the partition bound on random blocks."""
        steps = {Stage.LOCAL_SEARCH: self._local_search, Stage.LOCAL_COVER: self._local_cover,
                 Stage.RANDOM_PARTITION: self._random_partition}
        for stage in self.plan.local:
            if self.stop_reason is not None:
                return
            step = steps[stage]
            started = time.perf_counter()
            if step():
                self.stop_reason = StopReason.INTERRUPTED
            self._record(stage, started, self.stop_reason or "done")

    def _large(self) -> bool:
        return self.Z.shape[1] >= LARGE_NEIGHBOURHOODS_FROM

    def _local_search(self) -> bool:
        """:func:`improve_from_starts` from the incumbents, in its share of the budget less
        the incumbents' own seconds; where the search has its large neighbourhoods (from
        :data:`LARGE_NEIGHBOURHOODS_FROM` dimensions) it gets the larger share, which it
        hands back when it stalls. True if Ctrl-C stopped it."""
        dim = self.Z.shape[1]
        share = (_LARGE_SEARCH_SHARE if self._large() else _LOCAL_SEARCH_SHARE) * (
            0.5 if dim >= _HIGH_DIM else 1)
        seconds = self.budget.share(share, default=_LOCAL_SEARCH_SECONDS) - self.fitted
        pos, value, start, interrupted = improve_from_starts(
            self.Z, self.wpos, self.wneg, [(name, pos) for name, pos, _ in self.cands],
            time_limit=max(seconds, 0.0), n_jobs=self.n_jobs, verbose=self.verbose)
        if value < self.best:
            self.best_pos, self.best, self.source = pos, value, f"local search from {start}"
        return interrupted

    def _local_cover(self) -> bool:
        """The local IIS cover bound around the incumbent's errors, in its share (a third
        of it from :data:`_HIGH_DIM` on and where the random partition follows); its IISs
        seed the IIS cover. True if Ctrl-C stopped it."""
        dim = self.Z.shape[1]
        share = (_LARGE_COVER_SHARE if self._large() else _LOCAL_COVER_SHARE) / (
            3 if dim >= _HIGH_DIM or dim < _IIS_FIRST_DIM else 1)
        local = local_cover_bound(self.Z, self.wpos, self.wneg,
                                  anchors=self.best_pos != (self.wpos > self.wneg),
                                  time_limit=self.budget.share(share, _LOCAL_COVER_SECONDS))
        self.say(f"local IIS cover bound {local.value:g} ({len(local.cuts)} IISs, "
                 f"{local.elapsed:.3g} s)")
        self.bounded_beyond = True
        if local.value > self.bound.value:
            self.bound, self.local_cuts, self.seed = local, local.cuts, local
        return local.interrupted

    def _random_partition(self) -> bool:
        """The partition bound on random blocks, in its share of the budget (or until the
        deadline). True if Ctrl-C stopped it."""
        share = self.plan.partition_share
        seconds = (_RANDOM_PARTITION_SECONDS if not self.budget.limited
                   else share * self.budget.seconds if share is not None
                   else at_least(self.budget.left()))
        blocks = partition_bound(self.Z, self.wpos, self.wneg, blocks="random",
                                 incumbent=self.best_pos, n_jobs=self.n_jobs,
                                 time_limit=seconds)
        self.say(f"{blocks.method}: bound {blocks.value:g} ({blocks.elapsed:.3g} s)")
        self.bounded_beyond = True
        if blocks.value > self.bound.value:
            self.bound, self.local_cuts = blocks, None
        return blocks.interrupted

    # -- the proof paths ---------------------------------------------------------------------

    def paths(self) -> None:
        """Turns of the paths, doubling the slice at every round, until one proves its
        incumbent optimal, the bound meets it or the budget ends."""
        active = list(self.plan.paths)
        if not active and self.stop_reason is None:
            self.stop_reason = StopReason.NO_PROOF
        slice_ = _first_slice(active[0], self.total, self.n_jobs) if active else 0.0
        while active and self.stop_reason is None and self.proven_by is None:
            for path in list(active):
                # the quick bound's reserve is kept until a bound beyond the conflicts
                # (the IIS cover's, or the local cover's beyond the exact range) makes it moot
                moot = self.iis_bound or self.bounded_beyond
                left = self.budget.left(keep=0.0 if moot else self.reserve)
                if left <= 0:
                    self.stop_reason = StopReason.TIME_LIMIT
                    break
                seconds = min(slice_, left) if len(active) > 1 else (
                    left if self.budget.limited else None)
                started = time.perf_counter()
                turn = self._iis_turn if path == "iis_cover" else self._enumeration_turn
                res = turn(seconds, active)
                self._after_turn(path, res, started)
                if self.proven_by is not None or self.stop_reason is not None:
                    break
            slice_ *= 2

    def _after_turn(self, path: str, res, started: float) -> None:
        """Take a path's better labeling and check the bound against the incumbent."""
        if res.value < self.best:
            self.best_pos, self.best, self.found_by = res.positive, res.value, path
        if self.proven_by is None and self.best - self.bound.value <= self.rtol * abs(self.best):
            # the incumbent meets a bound: the IIS cover's, or the conflicts' alone (exact
            # for integer weights; otherwise relative to the value, weights have any units)
            self.proven_by = "iis_cover" if self.iis is not None else self.found_by
        stop = ("proven" if self.proven_by is not None
                else self.stop_reason or res.stop_reason or "slice")
        self.trace.record(_PATH_STAGES[path], started, self.best,
                          self.best if self.exhausted else self.bound.value, stop)

    def _enumeration_turn(self, seconds, active):
        """A run of the enumeration below the incumbent, for ``seconds``."""
        res = solve_min01(self.U, self.wpos, self.wneg, incumbent=self.best_pos,
                          backend=self.backend, max_candidates=self.max_candidates,
                          time_limit=seconds, n_jobs=self.n_jobs, verbose=self.verbose)
        self.n_cand = max(self.n_cand, res.n_candidates)
        if res.complete:
            self.proven_by, self.exhausted = "exact", True
        elif res.stop_reason != StopReason.TIME_LIMIT or len(active) == 1:
            self.stop_reason = res.stop_reason  # the budget, or Ctrl-C
        return res

    def _start_cover(self, seconds):
        """The IIS cover, started from the incumbent and the local cover's IISs (and its
        bound if they all hold on the samples); the set-up (thousands of exact checks)
        comes out of the turn's ``seconds``."""
        started = time.perf_counter()
        # verified on U first: the certificate's witness reuses the multipliers
        self.iis = IISCoverSolver(self.Z, self.wpos, self.wneg, incumbent=self.best_pos,
                                  samples=self.U, mip_solver=self.mip_solver,
                                  verbose=self.verbose)
        if self.seed is not None and self.iis.add_cuts(self.seed.cuts):
            self.iis.raise_bound(self.seed.value)
        return None if seconds is None else at_least(
            seconds - (time.perf_counter() - started))

    def _iis_turn(self, seconds, active):
        """A turn of the IIS cover for ``seconds`` (None: no limit), with the MILP's turn
        inside the first one where planned; the last path running keeps a share of its
        time for the LP relaxation of its master."""
        if self.iis is None:
            seconds = self._start_cover(seconds)
        else:
            self.iis.offer(self.best_pos)
        lp_reserve = (0.0 if seconds is None or len(active) > 1 or not enabled(Stage.FINAL_LP)
                      else min(_FINAL_LP_SHARE * seconds, _FINAL_LP_SECONDS))
        if self.milp_turn_due:
            self.milp_turn_due = False
            res = self._iis_turn_with_milp(seconds, lp_reserve)
        else:
            res = self.iis.run(seconds, lp_reserve)
        if res.lower_bound > self.bound.value:
            self.bound = LowerBound(res.lower_bound, BoundMethod.IIS_MASTER)
            self.iis_bound = True
        if res.complete:
            self.proven_by, self.iis_bound = "iis_cover", True
            self.bound.method = BoundMethod.IIS_COVER
        elif res.stop_reason == StopReason.INTERRUPTED:
            self.stop_reason = StopReason.INTERRUPTED
        elif res.stop_reason != StopReason.TIME_LIMIT:
            active.remove("iis_cover")  # floating point or the MIP failed: no progress here
            if not active:
                # the cover's incumbent may be far from the optimum: the big-M MILP, which
                # degenerate points do not stop, in the time left
                res = self._milp_after_the_cover(res)
                self.stop_reason = res.stop_reason
        elif len(active) == 1:
            self.stop_reason = StopReason.TIME_LIMIT
        return res

    def _milp_after_the_cover(self, res):
        """The IIS cover's result ``res``, its labeling replaced by the big-M MILP's when that
        errs less. The MILP runs until the deadline (the fit's budget is spent on the
        incumbent once no bound can grow), or :data:`MILP_INCUMBENT_SECONDS` without one."""
        seconds = self.budget.left() if self.budget.limited else MILP_INCUMBENT_SECONDS
        if seconds <= 0:
            return res
        pos, value, _, interrupted = best_incumbent(self.Z, self.wpos, self.wneg,
                                                    surrogate=False, milp_time_limit=seconds,
                                                    n_jobs=self.n_jobs)
        if value < res.value:
            res = replace(res, positive=pos, value=value)
        return replace(res, stop_reason=StopReason.INTERRUPTED) if interrupted else res

    def _iis_turn_with_milp(self, seconds, reserve=0.0):
        """The IIS cover's first turn of ``seconds`` (None: no limit), with a turn of the
        big-M MILP after twice :data:`_MILP_TURN_SECONDS` if the cover's gap is still above
        :data:`_MILP_TURN_GAP` then: the MILP's plane is offered to the cover as an incumbent
        (its bound, with bounded weights, is not the 0-1 loss's). The cover's last run keeps
        ``reserve`` seconds for its master's LP relaxation. Returns the cover's result
        (stopped by ``"interrupted"`` if Ctrl-C stopped the MILP)."""
        turn = Budget(seconds)
        milp = min(_MILP_TURN_SECONDS, self.budget.share(0.1, _MILP_TURN_SECONDS))
        res = self.iis.run(min(turn.left(), 2 * milp))
        if res.stop_reason != StopReason.TIME_LIMIT or turn.left() <= 0:
            return res
        if res.value - res.lower_bound > _MILP_TURN_GAP * res.value:
            started = time.perf_counter()
            pos, value, _, interrupted = best_incumbent(
                self.Z, self.wpos, self.wneg, surrogate=False,
                milp_time_limit=at_least(min(milp, turn.left())), n_jobs=self.n_jobs)
            self.trace.record(Stage.MILP_TURN, started, min(value, self.best),
                              self.bound.value, StopReason.INTERRUPTED if interrupted
                              else "done")
            self.say(f"big-M MILP turn: {value:g} errors (IIS cover at {res.value:g})")
            if value < res.value:
                self.iis.offer(pos)
            if interrupted:
                return replace(self.iis.run(0.0), stop_reason=StopReason.INTERRUPTED)
        return self.iis.run(None if seconds is None else at_least(turn.left()), reserve)

    # -- the end -----------------------------------------------------------------------------

    def quick_bound(self) -> None:
        """A budget stop with no bound but the conflicts (an IIS cover stopped before its
        bound rose; beyond the exact range the local cover and partitions ran instead): the
        quick :func:`lower_bound`, in the reserve (without a time limit, a tenth of the time
        spent within :data:`_BOUND_SECONDS_MIN` and :data:`_BOUND_SECONDS_MAX`)."""
        if self.exhausted:
            self.bound = LowerBound(self.best, BoundMethod.EXHAUSTIVE)
            self.iis_bound, self.local_cuts = False, None
            return
        if (self.proven_by is not None or self.stop_reason == StopReason.INTERRUPTED
                or self.iis_bound or self.bounded_beyond or not enabled(Stage.QUICK_BOUND)):
            return
        started = time.perf_counter()
        seconds = (self.reserve if self.budget.limited else
                   min(max(0.1 * self.budget.elapsed(), _BOUND_SECONDS_MIN),
                       _BOUND_SECONDS_MAX))
        quick = lower_bound(self.Z, self.wpos, self.wneg, time_limit=at_least(seconds),
                            incumbent=self.best_pos, n_jobs=self.n_jobs)
        if quick.value > self.bound.value:
            self.bound, self.local_cuts = quick, None
        if quick.interrupted:
            self.stop_reason = StopReason.INTERRUPTED
        self._record(Stage.QUICK_BOUND, started, self.stop_reason or "done")

    def result(self) -> PortfolioResult:
        value = labeling_errors(self.best_pos, self.wpos, self.wneg)
        return PortfolioResult(
            positive=self.best_pos, value=value, lower_bound=min(self.bound.value, value),
            lower_bound_method=self.bound.method, complete=self.proven_by is not None,
            method=self.proven_by or self.found_by, stop_reason=self.stop_reason,
            n_candidates=self.n_cand, upper_bound=self.upper,
            upper_bound_source=self.upper_source,
            iis=self.iis.cut_sets() if self.iis_bound else self.local_cuts,
            farkas=self.iis.farkas() if self.iis_bound else None)

    # -- reporting ---------------------------------------------------------------------------

    def _record(self, stage, started: float, stop) -> None:
        self.trace.record(stage, started, self.best, self.bound.value, stop)

    def say(self, msg: str) -> None:
        if self.verbose:
            print(f"ICEClassifier: {msg}", file=sys.stderr, flush=True)

    def say_start(self) -> None:
        self.say(f"{len(self.U)} unique points in dimension {self.Z.shape[1]}, "
                 f"{self.total:.4g} candidates; incumbent {self.best:g} errors "
                 f"({self.source}); paths {' then '.join(self.plan.paths)}")


def _ranked(cands: list) -> list:
    """Candidates ``(source, positive, errors)`` without repeated labelings (the first
    kept), fewest errors first, ties in the order given."""
    distinct: list = []
    for cand in cands:
        if not any(np.array_equal(cand[1], other) for _, other, _ in distinct):
            distinct.append(cand)
    return sorted(distinct, key=lambda cand: cand[2])
