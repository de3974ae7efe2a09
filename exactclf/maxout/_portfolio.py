"""The searches of one Deep-ICE fit, over both polarities, and the portfolio that schedules them.

Same instance as :func:`exactclf.maxout._exact.exact_union`: unique points ``Z`` in a
well-conditioned frame, and for each polarity (which class is the union of the K half-spaces)
the weights of the union class and of the other class at each point.

- ``"exact"`` and ``"coreset"`` run one search per polarity (:meth:`MaxoutSearch.run`):
  the exact search (for K = 1 the linear problem, solved as ICEClassifier solves it) or the
  coreset heuristic. An exact search of two polarities on more than a few blocks of points
  first runs the heuristic briefly on each, and searches the better polarity first, below its
  heuristic's errors, so that the other only has to be ruled out.
- ``"portfolio"`` (method="auto" beyond the exact search's range) works within a budget: the
  best plane of the linear problem; for each polarity the heuristic's network, one grown
  from that plane by local search and, for K >= 2, networks refined from starts of a smooth
  surrogate (:mod:`._surrogate`); proven partition lower bounds (:mod:`._bounds`); the exact
  search below the best network where its sampled cost fits; the bounds again with the
  time left; and when they stall, the linear problem again with more time (when its seed
  was not proven optimal) and further runs of the heuristic for better networks. It
  stops as soon as a bound meets the best network's errors. The fit's bound is the least of
  the polarities' bounds, so the bounds work on the polarity that holds it: a polarity whose
  obstruction cover already proves it cannot beat the networks found before it gets no
  networks of its own, and once a polarity's bound exceeds another's, its covers and
  partitions wait (their time goes to that other polarity, or to the networks).

Every polarity's result holds its best network (realized on ``Z``), a proven lower bound on
that polarity's optimum and how it was proven; the estimator combines them into its
certificate.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field, replace

import numpy as np

from .._backend import Backend
from .._budget import Budget, at_least
from .._certificate import BoundMethod, StopReason
from .._combinatorics import n_combinations
from .._partition import level_blocks
from .._resources import fits_memory
from .._stages import Stage, enabled
from .._trace import FitTrace
from .._warnings import warn
from .._zero_one._bounds import conflict_bound
from .._zero_one._local_cover import local_cover_bound
from .._zero_one._portfolio import solve_portfolio
from ._bounds import PLANE_RATE, PartitionBound, level_rows, partition_bound
from ._cliques import clique_cover_bound
from ._coreset import coreset_union, realize_on, refine
from ._exact import (
    estimate_union,
    exact_union,
    family_bytes,
    prepare_union,
    realize_union,
    union_on,
)
from ._joint import JointRows, joint_cover_bound
from ._surrogate import anneal_union, smooth_union

__all__ = ["MaxoutSearch", "PolarityResult", "SearchSettings"]

#: the portfolio without a time_limit: seconds for the heuristic, the partition bounds and
#: (where its sampled cost fits) the exact search
_DEFAULT_BUDGET = 120.0
#: shares of the budget: the heuristic (each polarity), the partition bounds before the
#: exact search (all polarities), sampling the exact search's cost
_HEURISTIC_SHARE = 0.1
_BOUND_SHARE = 0.4
#: shares of the budget for the linear seed: the exact linear problem (its best plane so far
#: when stopped), then, for K >= 2 and each polarity, the local search that adds and
#: re-solves half-spaces one at a time from that plane
_LINEAR_SHARE = 0.1
_GROW_SHARE = 0.1
#: for K >= 2 and each polarity, the smooth surrogate's starts, each refined by the local
#: search in an equal part of this share (and one start per run of the search for networks
#: when the bounds stall)
_SURROGATE_SHARE = 0.05
_SURROGATE_STARTS = 2
_SAMPLE_SHARE = 0.05
#: an exact search whose candidate family takes at most this share of the budget to
#: enumerate is considered before the partition bounds
_CHEAP_SHARE = 0.05
#: method="exact" with two polarities: seconds of the heuristic on each (at most a share of
#: time_limit), to search the better polarity first
_SEED_SECONDS = 1.0
_SEED_SHARE = 0.05
#: a polarity's partition bounds stop after this many grids in a row that neither raised
#: its bound nor grew its blocks
_STALLED_PARTITIONS = 3
#: the time stalled bounds leave goes to more heuristic runs while at least this many
#: seconds are left, until this many runs in a row found no better network
_MIN_SEARCH_SECONDS = 1.0
_STALLED_RUNS = 5
#: share of the budget for solving the linear problem again, with the time that stalled
#: bounds leave, when its seed was not proven optimal: a network of K half-spaces may use
#: one plane, so the fit must not return more errors than a longer linear search finds
_LINEAR_RETRY_SHARE = 0.25
#: share of the budget (each polarity) for the obstruction cover before the partition
#: bounds, and again with the time the partition bounds leave when they stall
_OBSTRUCTION_SHARE = 0.05
#: and at most these seconds before the partition bounds (the search converges in seconds
#: on the small sets where partition bounds are tried)
_OBSTRUCTION_SECONDS = 30.0
#: and for K >= 2 the same for the cover of obstructions of K + 1 pairwise blocked points
_PAIR_SHARE = 0.15
_PAIR_SECONDS = 60.0
#: share of the budget for the exact optima of blocks at few levels of the features that
#: take few values (for K >= 2, after the obstruction covers)
_LEVEL_SHARE = 0.3
#: share of the budget kept for the joint cover of the obstructions and blocks proven (its
#: MIP), after the bounds and before the networks get what is left, when a cover (one of
#: ``_COVERS``) holds the fit's bound after partitions were tried
_JOINT_SHARE = 0.1
_COVERS = frozenset({BoundMethod.OBSTRUCTION_COVER, BoundMethod.PAIR_COVER,
                     BoundMethod.JOINT_COVER})


@dataclass(frozen=True)
class CoverProof:
    """What proves a cover bound ``lower`` (found by ``method``): the obstructions ``cuts``
    (arrays of point indices; those that are not one IIS have their IISs in the polarity's
    ``rows.relations``) and, for the joint cover, the blocks with their bounds it used."""

    lower: float
    method: str
    cuts: list
    blocks: list = field(default_factory=list)


@dataclass
class PolarityResult:
    """The best network of one polarity: ``value`` its realized errors on the unique points,
    ``lower`` a proven lower bound on that polarity's optimum (``bound_method`` says how),
    ``n_tuples`` the K-tuples of the exact searches' spaces (before pruning)."""

    value: float
    planes: list
    lower: float
    n_evaluated: int
    stop_reason: str | None
    bound_method: str = BoundMethod.CONFLICTS
    n_tuples: int = 0
    partition: PartitionBound | None = None  # where the partition bounds go on
    # what the covers and partitions proved, as rows of one joint cover
    rows: JointRows = field(default_factory=JointRows)
    # the evidence of the highest bound a cover (or a partition's blocks) proved: it
    # proves its own ``lower`` whatever proved this result's since
    proof: CoverProof | None = None

    @property
    def size(self) -> int:
        """The partition bounds' next block size (0 before the first)."""
        return 0 if self.partition is None else self.partition.size


@dataclass(frozen=True)
class SearchSettings:
    """The estimator's parameters that the searches of one fit read.

    ``method`` is ``"exact"``, ``"coreset"`` or ``"portfolio"``; ``seed`` seeds every run of
    the coreset heuristic; the others are the estimator's parameters of the same names
    (``backend`` resolved from ``device``, ``n_jobs`` the usable workers).
    """

    method: str
    time_limit: float | None
    max_candidates: int | None
    coreset_size: int
    heap_size: int
    coreset_stop: int
    shrink: float
    n_shuffles: int
    seed: int
    backend: Backend
    n_jobs: int
    verbose: int
    trace: FitTrace | None = None

    def coreset(self, Z, want_w, other_w, K, seconds, *, final=False,
                run: int = 0) -> PolarityResult:
        """The coreset heuristic on one polarity for at most ``seconds``: its network and
        its pass sums' bound. ``final``: it is the polarity's search (it reports progress
        and its budget stop), not a seed of the others (which keeps only an interrupt).
        ``run``: runs after the first draw other blocks (seeded from ``seed`` and ``run``)."""
        res = coreset_union(Z, want_w, other_w, K, block_size=self.coreset_size,
                            heap_size=self.heap_size, stop_size=self.coreset_stop,
                            shrink=self.shrink, max_passes=self.n_shuffles,
                            rng=np.random.default_rng(self.seed if run == 0 else [self.seed, run]),
                            time_limit=seconds,
                            verbose=self.verbose if final else 0)
        stop = res.stop_reason if final or res.stop_reason == StopReason.INTERRUPTED else None
        return PolarityResult(res.value, res.planes, res.lower_bound, res.n_evaluated, stop,
                              BoundMethod.PARTITION)


def _linear_bound(res) -> tuple[float, str, CoverProof | None]:
    """The proven bound of a linear portfolio result, how it was proven, and its IISs when
    they prove it: its value when complete (the IIS cover within its relative tolerance, as
    ICEClassifier takes it), else its lower bound."""
    if res.complete:
        return res.value, BoundMethod.EXACT, None
    proof = None if res.iis is None else CoverProof(res.lower_bound, BoundMethod.LINEAR,
                                                    list(res.iis))
    return res.lower_bound, BoundMethod.LINEAR, proof


class MaxoutSearch:
    """The searches of one fit: ``searches`` lists ``(polarity, want_w, other_w)`` in the
    order of the ties (the first wins them), ``t0`` is when the fit started
    (``time.perf_counter()``); :meth:`run` returns the results by polarity.

    ``U`` (the points of ``Z`` in their original features, optional) shows which features
    take few values: blocks at a few of their levels are bounded first
    (:meth:`_levels`).

    ``results`` holds the best network of each polarity searched so far; the portfolio's
    ``budget`` and ``deadline`` are set when it starts.
    """

    def __init__(self, Z, searches, K: int, settings: SearchSettings, t0: float, U=None):
        self.Z, self.searches, self.K, self.settings, self.t0 = Z, searches, K, settings, t0
        self.U = U
        self.weights = {p: (want_w, other_w) for p, want_w, other_w in searches}
        self.results: dict[int, PolarityResult] = {}
        self.budget = Budget(settings.time_limit if settings.time_limit is not None
                             else _DEFAULT_BUDGET, start=t0)
        self.linear = None  # the portfolio's linear seed (a linear portfolio result)

    def run(self) -> dict[int, PolarityResult]:
        """The best network of each polarity searched (after Ctrl-C, possibly only one)."""
        if self.settings.method == "portfolio":
            return self._portfolio()
        return self._direct()

    def left(self) -> float:
        """Seconds left of the portfolio's budget."""
        return self.budget.left()

    def _share(self, fraction: float) -> float:
        """``fraction`` of the budget, at most what is left of it."""
        return min(self.budget.share(fraction), self.left())

    def incumbent(self) -> float:
        """The errors of the best network found."""
        return min(r.value for r in self.results.values())

    def _proven(self) -> bool:
        """Whether every polarity's bound meets the best network's errors."""
        return len(self.results) == len(self.searches) and all(
            r.lower >= self.incumbent() for r in self.results.values())

    def _stage(self, name: str, step, *args):
        """Run one stage (a method; True from it means Ctrl-C stopped it) and record its
        row in the fit's trace: the incumbent and the network class's bound after it. Once
        the fit is proven, no stage runs (each would find nothing open)."""
        if self._proven():
            return False
        started = time.perf_counter()
        out = step(*args)
        self._record(name, started, out is True)
        return out

    def _record(self, name: str, started: float, interrupted: bool = False) -> None:
        """The trace's row of a stage that started at ``started`` and ends now
        (``interrupted``: Ctrl-C stopped it, as the stage says or a network records)."""
        trace = self.settings.trace
        if trace is None:
            return
        interrupted = interrupted or any(r.stop_reason == StopReason.INTERRUPTED
                                         for r in self.results.values())
        incumbent = self.incumbent() if self.results else math.inf
        # the class's bound: the weaker polarity's, once both have one
        bound = (min(r.lower for r in self.results.values())
                 if len(self.results) == len(self.searches) else 0.0)
        stop = (StopReason.INTERRUPTED if interrupted else
                "proven" if incumbent <= bound else "done")
        trace.record(name, started, incumbent, bound, stop)

    def say(self, msg: str) -> None:
        if self.settings.verbose:
            print(f"Deep-ICE: {msg} ({time.perf_counter() - self.t0:.1f} s)", file=sys.stderr,
                  flush=True)

    def _interrupted(self):
        """Ctrl-C outside the searches that stop by themselves: the networks found so far,
        every polarity marked interrupted (with a warning)."""
        warn("Deep-ICE interrupted: returning the best network found so far",
             RuntimeWarning)
        for r in self.results.values():
            r.stop_reason = StopReason.INTERRUPTED
        return self.results

    # -- method="exact" or "coreset" --------------------------------------------------------

    def _direct(self):
        """The exact search or the coreset heuristic alone, one polarity after the other
        (the better one first when the heuristic's seeds say which)."""
        s, searches = self.settings, self.searches
        seeds: dict[int, PolarityResult] = {}
        if (s.method == "exact" and self.K > 1 and len(searches) == 2
                and len(self.Z) > 2 * s.coreset_size and enabled(Stage.POLARITY_SEEDS)):
            seeds = self._stage(Stage.POLARITY_SEEDS, self._seed_polarities)
            if any(r.stop_reason == StopReason.INTERRUPTED for r in seeds.values()):
                self.results = seeds  # Ctrl-C: the heuristic's networks and bounds
                return seeds
            searches = sorted(searches, key=lambda x: (seeds[x[0]].value, -x[0]))
        for k, (polarity, want_w, other_w) in enumerate(searches):
            remaining = None
            if s.time_limit is not None:  # half of the budget left for the first polarity
                remaining = at_least(s.time_limit - self.budget.elapsed()) / (len(searches) - k)
            bound = np.inf
            if self.results:  # the second polarity only has to beat the first
                first = next(iter(self.results.values())).value
                # ties go to polarity +1 (errors are integers in the exact search)
                bound = first + 1 if polarity == 1 and s.method == "exact" else first
            elif polarity in seeds:  # at most the heuristic's errors
                bound = seeds[polarity].value + 1
            started = time.perf_counter()
            try:
                res = self._search(want_w, other_w, remaining, bound)
            except KeyboardInterrupt:  # before the search could stop by itself (preparing
                # its candidate family) or after (realizing its network): what was found
                for p, seed in seeds.items():
                    self.results.setdefault(p, seed)
                if not self.results:
                    raise
                return self._interrupted()
            seed = seeds.get(polarity)
            if seed is not None and seed.value < res.value:  # the search stopped early
                res.value, res.planes = seed.value, seed.planes
            self.results[polarity] = res
            self._record(Stage.EXACT_SEARCH if s.method == "exact" else Stage.HEURISTIC,
                         started)
            if res.stop_reason == StopReason.INTERRUPTED:  # Ctrl-C ends the fit, not one polarity
                break
        return self.results

    def _seed_polarities(self):
        """The coreset heuristic on each polarity for a moment: its networks, by polarity."""
        seconds = _SEED_SECONDS
        if self.settings.time_limit is not None:
            seconds = min(seconds, _SEED_SHARE * self.settings.time_limit)
        seeds = {}
        for polarity, want_w, other_w in self.searches:
            seeds[polarity] = self.settings.coreset(self.Z, want_w, other_w, self.K, seconds)
            if seeds[polarity].stop_reason == StopReason.INTERRUPTED:
                break
        return seeds

    def _search(self, want_w, other_w, time_limit, upper_bound):
        """One polarity: the best network found, realized on ``Z``, with its proofs."""
        s, Z, K = self.settings, self.Z, self.K
        if s.method == "coreset":
            return s.coreset(Z, want_w, other_w, K, time_limit, final=True)
        if K == 1:
            # one half-space: the exact linear problem, solved as ICEClassifier solves it
            # (enumeration and IIS cover, with their proven bounds when a budget stops them)
            res = solve_portfolio(Z, Z, want_w, other_w, backend=s.backend,
                                  max_candidates=s.max_candidates, time_limit=time_limit,
                                  n_jobs=s.n_jobs, verbose=s.verbose)
            sets, n_eval, n_tuples = [res.positive], res.n_candidates, 0
            lower, how, proof = _linear_bound(res)
        else:
            problem = prepare_union(Z, want_w, other_w, K, s.max_candidates)
            res = exact_union(Z, want_w, other_w, K, backend=s.backend,
                              upper_bound=upper_bound, time_limit=time_limit, n_jobs=s.n_jobs,
                              verbose=s.verbose, problem=problem)
            sets, n_eval, n_tuples = res.sets, res.n_evaluated, problem.n_tuples
            # a complete search proves that no network errs less than its value (or than
            # the bound it was asked to beat); otherwise only conflicting duplicates bound it
            conflicts = conflict_bound(want_w, other_w)
            lower, how = ((min(res.value, upper_bound), BoundMethod.EXACT) if res.complete
                          else (conflicts.value, conflicts.method))
            proof = None
        planes, value, exact = realize_union(Z, sets, want_w, other_w)
        stop_reason = res.stop_reason
        if not exact:
            stop_reason = stop_reason or StopReason.UNREALIZABLE_MARGIN
        return PolarityResult(value, planes, lower, n_eval, stop_reason, how, n_tuples,
                              proof=proof)

    # -- method="auto" beyond the exact search's range: the portfolio -----------------------

    def _portfolio(self):
        """The linear seed, the heuristics, then the proofs (partition bounds and exact
        searches, better polarity first) until a bound meets the best network's errors or
        the budget is spent; what time is left improves the bounds of the polarities still
        open, then their networks (:meth:`_search_more`)."""
        try:
            linear = self.linear = self._stage(Stage.LINEAR_SEED, self._linear_seed)
            if (linear is None or self._stage(Stage.HEURISTIC, self._heuristics, linear)
                    or self._refine_best(linear)):
                return self.results
            # the better polarity first: the other then only has to be ruled out
            order = self._best_first()
            if self._prove(order) or self._stage(Stage.MORE_SEARCH, self._search_more, order):
                return self.results
        except KeyboardInterrupt:  # between the phases (each phase stops by itself)
            if not self.results:
                raise
            return self._interrupted()
        # a polarity still open ran out of budget, or its bounds and networks stopped
        # improving
        why = (StopReason.TIME_LIMIT if self.left() < _MIN_SEARCH_SECONDS
               else StopReason.BOUNDS_STALLED)
        for r in self.results.values():
            if r.lower < self.incumbent() and r.stop_reason is None:
                r.stop_reason = why
        return self.results

    def _best_first(self) -> list:
        """The polarities with a network, fewest errors first (ties: +1 first)."""
        return sorted(self.results, key=lambda p: (self.results[p].value, -p))

    def _linear_seed(self):
        """The best plane of the linear problem within its share of the budget (one plane
        is a network too); None after Ctrl-C, with that plane as the fit's network."""
        polarity = self.searches[0][0]
        linear = self._solve_linear(_LINEAR_SHARE)
        self.say(f"linear seed: {linear.value:g} errors, bound {linear.lower_bound:g}")
        if linear.stop_reason != StopReason.INTERRUPTED:
            return linear
        self.results[polarity] = self._plane_result(polarity, linear.positive,
                                                    StopReason.INTERRUPTED)
        return None

    def _plane_result(self, polarity, side, stop_reason=None) -> PolarityResult:
        """One half-space, whose inside is ``side``, as the polarity's network, bounded only
        by conflicting duplicates."""
        want_w, other_w = self.weights[polarity]
        planes, value, _ = realize_union(self.Z, [side], want_w, other_w)
        conflicts = conflict_bound(want_w, other_w)
        return PolarityResult(value, planes, conflicts.value, 0, stop_reason, conflicts.method)

    def _solve_linear(self, share: float, incumbent=None):
        """The linear problem of the first polarity searched, in ``share`` of the budget
        (at most the time left), going on from the labeling ``incumbent`` if given: a linear
        portfolio result."""
        _, want_w, other_w = self.searches[0]
        return solve_portfolio(self.Z, self.Z, want_w, other_w,
                               time_limit=at_least(self._share(share)),
                               n_jobs=self.settings.n_jobs, incumbent=incumbent)

    def _side(self, positive: np.ndarray, polarity: int) -> np.ndarray:
        """A labeling of the first polarity searched, as the union's side of ``polarity``."""
        return positive if polarity == self.searches[0][0] else ~positive

    def _heuristics(self, linear) -> bool:
        """For each polarity the coreset heuristic's network (the linear seed's plane where
        the heuristic is ablated); for K = 1 the linear seed itself with its proven bound.
        True if Ctrl-C stopped them."""
        for k, (polarity, want_w, other_w) in enumerate(self.searches):
            if k and self.K > 1:  # a later polarity may be ruled out before its networks
                ruled_out = self._ruled_out(polarity, self._side(linear.positive, polarity))
                if ruled_out is None:
                    return True
                if ruled_out:
                    continue
            prior = self.results.get(polarity)  # from _ruled_out: its bound stands
            res = self.results[polarity] = self.settings.coreset(
                self.Z, want_w, other_w, self.K,
                at_least(self._share(_HEURISTIC_SHARE))
            ) if enabled(Stage.HEURISTIC) else self._plane_result(
                polarity, self._side(linear.positive, polarity))
            if prior is not None:  # what its cover proved stays, rows of its joint cover
                res.rows = prior.rows
                if prior.lower > res.lower:
                    res.lower, res.bound_method = prior.lower, prior.bound_method
                    res.proof = prior.proof
            self.say(f"polarity {polarity:+d}: heuristic {res.value:g} errors, bound "
                     f"{res.lower:g}")
            if res.stop_reason == StopReason.INTERRUPTED:
                return True
            if self.K == 1:  # the linear problem itself: its plane and its proven bound
                self._adopt([self._side(linear.positive, polarity)], want_w, other_w, res)
                lower, how, proof = _linear_bound(linear)
                if lower > res.lower:
                    res.lower, res.bound_method, res.proof = lower, how, proof
        return False

    def _refine_best(self, linear) -> bool:
        """For K >= 2, the network of the polarity that errs least, refined: the local
        search that grows the linear seed's plane into K half-spaces (never worse than that
        plane), and the smooth surrogate's starts. The others' networks are refined after
        the bounds, in the time they leave (:meth:`_search_more`): a polarity's networks
        matter only where they beat the best one, and its bound only where it is the fit's.
        True if Ctrl-C stopped them."""
        if self.K == 1:
            return False
        polarity = self._best_first()[0]
        res = self.results[polarity]
        if enabled(Stage.GROW) and self._stage(
                Stage.GROW, self._grow, self._side(linear.positive, polarity), polarity,
                self._share(_GROW_SHARE)):
            return True
        self.say(f"polarity {polarity:+d}: grown from the linear seed, {res.value:g} errors")
        if enabled(Stage.SURROGATE) and self._stage(
                Stage.SURROGATE, self._surrogates, polarity,
                self._share(_SURROGATE_SHARE), _SURROGATE_STARTS):
            return True
        self.say(f"polarity {polarity:+d}: refined from the smooth surrogate, {res.value:g} "
                 "errors")
        return False

    def _ruled_out(self, polarity, side) -> bool | None:
        """Whether the obstruction cover of ``polarity`` (searched around the linear seed's
        plane, which becomes its network) already proves that it cannot beat the best
        network of the polarities before it: then its heuristics are not run, and their time
        goes to the others' proofs. None if Ctrl-C stopped the cover."""
        before = self.incumbent()
        self.results[polarity] = self._plane_result(polarity, side)
        if self._obstructions([polarity], min(self.budget.share(_OBSTRUCTION_SHARE),
                                              _OBSTRUCTION_SECONDS), 0.0):
            return None
        if self.results[polarity].lower < before:
            return False
        self.say(f"polarity {polarity:+d}: its bound {self.results[polarity].lower:g} rules it "
                 f"out (best network {before:g}): no networks searched")
        return True

    def _prove(self, order) -> bool:
        """Obstruction covers, level blocks and partition bounds, and exact searches, for the
        polarities in ``order``, then the bounds again in the time left, the joint cover
        last; True if Ctrl-C stopped them."""
        dim = self.Z.shape[1]
        planes = n_combinations(len(self.Z), dim) if dim else 1
        # an exact search whose family is cheap is tried before the bounds (it often
        # proves at once what partitions of small blocks never reach)
        cheap = planes / PLANE_RATE <= self.budget.share(_CHEAP_SHARE)
        before = {p: self.results[p].lower for p in order}
        if self._stage(Stage.OBSTRUCTION_COVER, self._obstructions, order,
                       min(self.budget.share(_OBSTRUCTION_SHARE), _OBSTRUCTION_SECONDS),
                       min(self.budget.share(_PAIR_SHARE), _PAIR_SECONDS)):
            return True
        for phase in ("exact", "bounds") if cheap else ("bounds", "exact"):
            if phase == "bounds":
                # level blocks first; the joint cover that joins them keeps its share
                if self._stage(Stage.LEVEL_BLOCKS, self._levels, order,
                               min(time.perf_counter() + self.budget.share(_LEVEL_SHARE),
                                   self.budget.deadline - self.budget.share(_JOINT_SHARE))):
                    return True
                if self._stage(Stage.PARTITION_BOUNDS, self._bounds, order,
                               self.t0 + self.budget.share(_BOUND_SHARE), self.settings.seed):
                    return True
                continue
            for p in order if self.K > 1 and enabled(Stage.EXACT_SEARCH) else ():
                if self.results[p].lower >= self.incumbent() or self.left() <= 0:
                    continue
                if self._stage(Stage.EXACT_SEARCH, self._exact_phase, p,
                               self.incumbent()):
                    return True
        if all(self.results[p].lower <= before[p] for p in order):
            # the bounds raised nothing in their share (in many dimensions blocks small
            # enough to solve are separable): the rest of the budget goes to the networks
            self.say("bounds raised nothing: the time left goes to the networks")
            return False
        # where a cover holds the fit's bound and partitions were tried and fell short of
        # it, the joint cover gets the end of the budget: its MIP adds the blocks' errors to
        # the obstructions'; where partitions hold it (or have not run yet), their larger
        # blocks raise it more
        low = min((self.results[p] for p in order), key=lambda r: r.lower)
        covered = (low.lower < self.incumbent() and low.bound_method in _COVERS
                   and low.partition is not None)
        reserve = self.budget.share(_JOINT_SHARE) if covered else 0.0
        if self._stage(Stage.PARTITION_BOUNDS, self._bounds, order,
                       self.budget.deadline - reserve,
                       self.settings.seed + 1):
            return True
        # the partition bounds stalled before the deadline: the obstructions take the rest
        share = (self.left() - reserve) / len(order) / 2
        return (self._stage(Stage.OBSTRUCTION_COVER, self._obstructions, order, share, share, 1)
                or self._stage(Stage.JOINT_COVER, self._joint, order))

    def _search_more(self, order) -> bool:
        """The time that stalled bounds leave goes to the networks: the linear problem
        again when its seed was not proven (:meth:`_retry_linear`), then, on each polarity
        that could still beat the best network, a large-neighbourhood move from its network
        (:meth:`_refine`) and the coreset heuristic again, drawing other blocks at every
        run (a better network closes the gap from above; its pass sums are
        bounds too), until :data:`_STALLED_RUNS` runs in a row find none. True if Ctrl-C
        stopped it."""
        if self._retry_linear():
            return True
        run = stalled = 0
        while (self.left() >= _MIN_SEARCH_SECONDS and stalled < _STALLED_RUNS
               and enabled(Stage.MORE_SEARCH)):
            open_ = [p for p in order if self.results[p].lower < self.incumbent()]
            if not open_:
                return False
            run, stalled, before = run + 1, stalled + 1, self.incumbent()
            if any(self._more_for(p, run) for p in open_):
                return True
            if self.incumbent() < before:
                stalled = 0
        return False

    def _more_for(self, p, run) -> bool:
        """One run of :meth:`_search_more` on polarity ``p``: a large-neighbourhood move
        from its best network, the smooth surrogate from a new start (K >= 2; for K = 1 it
        is a convex logistic regression, whose every start lands where the linear
        surrogates already did) and the coreset heuristic from other blocks. True if Ctrl-C
        stopped it."""
        res, (want_w, other_w) = self.results[p], self.weights[p]
        before = res.value
        if self._refine(p, self._share(_HEURISTIC_SHARE)):
            return True
        if res.value < before:
            self.say(f"polarity {p:+d}: refined, {res.value:g} errors")
        before = res.value
        if self.K > 1 and enabled(Stage.SURROGATE) and self._surrogates(
                p, self._share(_SURROGATE_SHARE / _SURROGATE_STARTS), 1,
                run=run):
            return True
        if res.value < before:
            self.say(f"polarity {p:+d}: smooth surrogate run {run}, {res.value:g} errors")
        if not enabled(Stage.HEURISTIC):
            return False
        got = self.settings.coreset(
            self.Z, want_w, other_w, self.K,
            at_least(self._share(_HEURISTIC_SHARE)), run=run)
        if got.value < res.value:
            res.value, res.planes = got.value, got.planes
            self.say(f"polarity {p:+d}: heuristic run {run}, {got.value:g} errors")
        if got.lower > res.lower:
            res.lower, res.bound_method = got.lower, got.bound_method
        if got.stop_reason == StopReason.INTERRUPTED:
            res.stop_reason = StopReason.INTERRUPTED
            return True
        return False

    def _retry_linear(self) -> bool:
        """The linear problem again, for at most :data:`_LINEAR_RETRY_SHARE` of the budget,
        when its seed was not proven optimal, its bound leaves room below the best network
        and a polarity is still open: every polarity takes the plane found (or its
        complement) if it errs less. It goes on from the seed's plane, as ``ICEClassifier``
        would with a longer budget, so a K >= 2 fit does not end above the linear model
        that one would return. True if Ctrl-C stopped it."""
        linear, incumbent = self.linear, self.incumbent()
        if (self.K == 1 or linear is None or linear.complete or not enabled(Stage.LINEAR_RETRY)
                or linear.lower_bound >= incumbent
                or all(r.lower >= incumbent for r in self.results.values())
                or self.left() < _MIN_SEARCH_SECONDS):
            return False
        # from the seed's plane: beyond the exact range its local search goes on
        again = self._solve_linear(_LINEAR_RETRY_SHARE, incumbent=linear.positive)
        self.say(f"linear problem again: {again.value:g} errors")
        for polarity, want_w, other_w in self.searches:
            self._adopt([self._side(again.positive, polarity)], want_w, other_w,
                        self.results[polarity])
        if again.stop_reason == StopReason.INTERRUPTED:
            for r in self.results.values():
                r.stop_reason = StopReason.INTERRUPTED
            return True
        return False

    def _obstructions(self, order, seconds, pair_seconds, seed=0) -> bool:
        """The obstruction cover bounds of each open polarity whose bound is the fit's (the
        others' time goes to it), in at most ``seconds`` and ``pair_seconds`` each: points of
        the union class in the convex hull of points of
        the other class (:func:`~exactclf._zero_one._local_cover.local_cover_bound`, searched
        first around the union-class points its network leaves out), then for K >= 2 with
        those, K + 1 union points pairwise blocked by the other class
        (:func:`~._cliques.clique_cover_bound`); True if Ctrl-C stopped them."""
        for p in order:
            res = self.results[p]
            if (res.lower >= self.incumbent() or self.left() <= 0 or seconds <= 0
                    or not self._bounds_fit(p)):
                continue
            want_w, other_w = self.weights[p]
            missed = (want_w > other_w) & ~union_on(self.Z, res.planes)
            if not enabled(Stage.OBSTRUCTION_COVER):
                continue
            got = local_cover_bound(self.Z, want_w, other_w, anchors=missed, hull_only=True,
                                    time_limit=min(seconds, self.left()),
                                    random_state=self.settings.seed + seed)
            if self._take_cover(p, got, BoundMethod.OBSTRUCTION_COVER):
                return True
            if (self.K == 1 or res.lower >= self.incumbent() or pair_seconds <= 0
                    or not self._bounds_fit(p) or not enabled(Stage.PAIR_COVER)):
                continue
            pairs = clique_cover_bound(self.Z, want_w, other_w, self.K,
                                       time_limit=at_least(min(pair_seconds, self.left())),
                                       cuts=got.cuts, random_state=self.settings.seed + seed)
            if self._take_cover(p, pairs, BoundMethod.PAIR_COVER):
                return True
        return False

    def _levels(self, order, until) -> bool:
        """For K >= 2, the exact optima of blocks at a few levels of the features that take
        few values (:func:`~exactclf._partition.level_blocks`, searched by
        :func:`~._bounds.level_rows` until ``until``, a ``time.perf_counter()`` value) for the
        open polarity whose bound is the fit's, as rows of its joint cover, which then runs;
        True if Ctrl-C stopped them."""
        seconds = until - time.perf_counter()
        if self.K == 1 or self.U is None or seconds <= 0 or not enabled(Stage.LEVEL_BLOCKS):
            return False
        open_ = self._open(order)
        if not open_:
            return False
        p = open_[0]
        res, (want_w, other_w) = self.results[p], self.weights[p]
        # level_rows starts only the blocks whose candidate family fits the time left
        blocks = level_blocks(self.U)
        if not blocks:
            return False
        rows, interrupted = level_rows(self.Z, want_w, other_w, self.K, blocks,
                                       planes=res.planes, time_limit=seconds,
                                       n_jobs=self.settings.n_jobs)
        res.rows.add(blocks=rows)
        self.say(f"polarity {p:+d}: {len(rows)} of {len(blocks)} level blocks proven above "
                 "their conflicts")
        if interrupted:
            res.stop_reason = StopReason.INTERRUPTED
            return True
        return bool(rows) and self._joint(order)

    def _open(self, order) -> list:
        """The polarities of ``order`` whose bound leaves room below the best network (a
        network of theirs could still beat it), lowest bound first, ties in ``order``."""
        return sorted((p for p in order if self.results[p].lower < self.incumbent()),
                      key=lambda p: self.results[p].lower)

    def _bounds_fit(self, polarity) -> bool:
        """Whether ``polarity``'s bound is the fit's (the least of the polarities'): raising
        a polarity's bound above another's leaves the fit's bound where it was."""
        lower = self.results[polarity].lower
        return all(lower <= r.lower for q, r in self.results.items() if q != polarity)

    def _take_cover(self, polarity, got, how, blocks=()) -> bool:
        """The polarity's bound becomes the cover bound ``got`` (proven ``how``, with the
        joint cover's ``blocks``) if higher; True if Ctrl-C stopped its search."""
        res = self.results[polarity]
        res.rows.add(cuts=got.cuts, relations=got.relations)
        if got.value > res.lower:
            res.lower, res.bound_method = got.value, how
            res.proof = CoverProof(got.value, how, list(got.cuts), list(blocks))
            self.say(f"polarity {polarity:+d}: bound {got.value:g} ({how}, "
                     f"{len(got.cuts)} obstructions)")
        if got.interrupted:
            res.stop_reason = StopReason.INTERRUPTED
        return got.interrupted

    def _bounds(self, order, until, seed) -> bool:
        """Partition bounds until ``until`` (a ``time.perf_counter()`` value), one partition
        at a time, always for the open polarity whose bound is the fit's (the lowest; the
        others' cannot raise it), each partition's blocks growing while the next is
        predicted to fit; True if Ctrl-C stopped them."""
        results, incumbent = self.results, self.incumbent()
        stalled = dict.fromkeys(order, 0)  # partitions in a row without progress
        # blocks that grow back after a block search ran out of time and shrank them are
        # no progress: only a size never reached before is
        largest = {p: results[p].size for p in order}
        while time.perf_counter() < until and enabled(Stage.PARTITION_BOUNDS):
            open_ = [p for p in self._open(order) if results[p].bound_method != "exact"
                     and stalled[p] < _STALLED_PARTITIONS]
            if not open_ or not self._bounds_fit(open_[0]):
                return False  # no open polarity holds the fit's bound (it stalled)
            p = open_[0]
            seed += len(order)
            before = results[p].lower
            if self._improve_bound(p, incumbent, until - time.perf_counter(), seed):
                return True
            improved = results[p].lower > before or results[p].size > largest[p]
            largest[p] = max(largest[p], results[p].size)
            stalled[p] = 0 if improved else stalled[p] + 1
            if improved:
                self.say(f"polarity {p:+d}: bound {results[p].lower:g} "
                         f"({results[p].bound_method}, blocks of {results[p].size} points "
                         "next)")
        return False

    def _improve_bound(self, polarity, target, seconds, seed) -> bool:
        """Raise the polarity's bound with one partition bound within ``seconds`` (stopped
        once it reaches ``target``); True if Ctrl-C stopped it."""
        res = self.results[polarity]
        if res.lower >= target or seconds <= 0:
            return False
        want_w, other_w = self.weights[polarity]
        got = partition_bound(self.Z, want_w, other_w, self.K, time_limit=seconds,
                              planes=res.planes, random_state=seed, target=target,
                              max_partitions=1, n_jobs=self.settings.n_jobs,
                              start=replace(res.partition or PartitionBound(0.0, ""),
                                            value=res.lower, method=res.bound_method,
                                            interrupted=False))
        raised = (got.value, got.method) != (res.lower, res.bound_method)
        res.lower, res.bound_method, res.partition = got.value, got.method, got
        res.rows.add(blocks=got.blocks)
        if raised and got.method == "partition":  # its best partition's blocks are rows
            res.proof = CoverProof(got.value, got.method, [], list(res.rows.blocks))
        if got.interrupted:
            res.stop_reason = StopReason.INTERRUPTED
        return got.interrupted

    def _joint(self, order) -> bool:
        """The joint cover of the obstructions and solved blocks
        (:func:`~._joint.joint_cover_bound`) of each open polarity whose bound is the
        fit's, lowest first, each in at most :data:`_JOINT_SHARE` of the budget; True if
        Ctrl-C stopped it."""
        for p in self._open(order) if enabled(Stage.JOINT_COVER) else ():
            res = self.results[p]
            if not res.rows.n_rows or self.left() <= 0 or not self._bounds_fit(p):
                continue
            want_w, other_w = self.weights[p]
            got = joint_cover_bound(want_w, other_w, res.rows.cuts.values(), res.rows.blocks,
                                    time_limit=self._share(_JOINT_SHARE))
            if self._take_cover(p, got, BoundMethod.JOINT_COVER, blocks=res.rows.blocks):
                return True
        return False

    def _exact_phase(self, polarity, incumbent) -> bool:
        """The exact search of one polarity below ``incumbent`` when its family and its
        sampled cost fit the time left; the polarity's result takes any better network and,
        when the search completes, its proven optimum. True if Ctrl-C stopped it."""
        s, Z, res = self.settings, self.Z, self.results[polarity]
        want_w, other_w = self.weights[polarity]
        planes = n_combinations(len(Z), Z.shape[1]) if Z.shape[1] else 1
        if planes / PLANE_RATE > self.left() / 2:
            self.say(f"polarity {polarity:+d}: exact search skipped: its {planes:.3g} "
                     f"hyperplanes would take about {planes / PLANE_RATE:.3g} s")
            return False
        if not fits_memory(family_bytes(len(Z), planes)):
            self.say(f"polarity {polarity:+d}: exact search skipped: its candidate family "
                     "would not fit in memory")
            return False
        problem = prepare_union(Z, want_w, other_w, self.K)
        res.n_tuples += problem.n_tuples
        est = estimate_union(problem, incumbent,
                             time_limit=_SAMPLE_SHARE * max(self.left(), 0))
        if est.found is not None:  # the sample met a better network: keep it
            self._adopt(problem.family[est.found], want_w, other_w, res)
            incumbent = min(incumbent, res.value)
        seconds = est.seconds / s.n_jobs
        self.say(f"exact search below {incumbent:g}: about {seconds:.0f} s estimated, "
                 f"{self.left():.0f} s left")
        if seconds > self.left():
            return False
        out = exact_union(Z, want_w, other_w, self.K, backend=s.backend, upper_bound=incumbent,
                          time_limit=at_least(self.left()), n_jobs=s.n_jobs,
                          verbose=s.verbose, problem=problem, work=est.work,
                          lower_bound=res.lower)
        res.n_evaluated += out.n_evaluated
        if out.value < incumbent:
            self._adopt(out.sets, want_w, other_w, res)
        if out.complete and res.lower < min(out.value, incumbent):
            res.lower, res.bound_method = min(out.value, incumbent), BoundMethod.EXACT
        if out.stop_reason is not None:
            res.stop_reason = out.stop_reason
        return out.stop_reason == StopReason.INTERRUPTED

    def _grow(self, side, polarity, seconds) -> bool:
        """Local search from the half-space whose inside is ``side``: the other K - 1 start
        empty and every half-space in turn is re-solved on the points the others leave out,
        for at most ``seconds`` (:meth:`_refine`). True if Ctrl-C stopped it."""
        want_w, other_w = self.weights[polarity]
        planes = realize_union(self.Z, [side], want_w, other_w)[0]
        empty = (np.zeros(self.Z.shape[1]), -1.0)
        # the empty half-spaces first: the first move places one on the points the seed's
        # half-space leaves out (re-solving the seed's first would solve the linear problem
        # again)
        return self._refine(polarity, seconds, [empty] * (self.K - 1) + planes)

    def _refine(self, polarity, seconds, planes=None) -> bool:
        """:func:`refine` from ``planes`` (the polarity's best network by default) for at
        most ``seconds``: every half-space in turn re-solved on the points the others leave
        out; the polarity takes the network if it errs less. True if Ctrl-C stopped it."""
        res, (want_w, other_w) = self.results[polarity], self.weights[polarity]
        planes, value, interrupted = refine(self.Z, res.planes if planes is None else planes,
                                            want_w, other_w,
                                            deadline=time.perf_counter() + max(seconds, 0.0))
        if value < res.value:
            res.value, res.planes = value, planes
        if interrupted:
            res.stop_reason = StopReason.INTERRUPTED
        return interrupted

    def _surrogates(self, polarity, seconds, starts, run=0) -> bool:
        """``starts`` random starts of the smooth surrogate (:func:`smooth_union`, seeded by
        the fit's seed, the polarity and ``run``), each with its annealed planes
        (:func:`anneal_union`), realized and refined (:meth:`_refine`) in an equal part of
        ``seconds``. True if Ctrl-C stopped it."""
        want_w, other_w = self.weights[polarity]
        rng = np.random.default_rng([self.settings.seed, polarity + 1, run])
        end = time.perf_counter() + seconds
        for k in range(starts):
            now = time.perf_counter()
            share = (end - now) / (starts - k)
            if share <= 0:
                break
            # the smooth fit takes at most half of the start's share, the refinement the rest
            planes = smooth_union(self.Z, want_w, other_w, self.K, rng,
                                  deadline=now + share / 2)
            annealed = anneal_union(self.Z, want_w, other_w, planes, deadline=now + share / 2)
            # the annealed start first: the logistic one gets what its refinement leaves
            for start in ([] if annealed is None else [annealed]) + [planes]:
                realized = realize_on(self.Z, start, want_w, other_w)
                if realized is not None and self._refine(
                        polarity, now + share - time.perf_counter(), realized[0]):
                    return True
        return False

    def _adopt(self, sets, want_w, other_w, res) -> None:
        """Realize the subsets ``sets`` and keep them in ``res`` if they err less there."""
        planes, value, _ = realize_union(self.Z, sets, want_w, other_w)
        if value < res.value:
            res.value, res.planes = value, planes
