"""DeepICEMaxoutClassifier: two-layer maxout networks with the fewest training errors."""

from __future__ import annotations

import math
import sys
import time
import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._backend import resolve_device
from .._base import BinaryClassifierMixin, check_count_weights, validate_binary
from .._combinatorics import n_combinations
from .._fit_guard import guarded_fit
from .._geometry import THIN_POINTS
from .._resources import check_memory, effective_workers
from .._separator import UNREALIZABLE_MARGIN
from ..linear._portfolio import solve_portfolio
from ._bounds import PLANE_RATE, PolarityBound, conflict_bound, partition_bound
from ._coreset import coreset_union, refine
from ._exact import estimate_union, exact_union, prepare_union, realize_union, useful_planes

__all__ = ["DeepICEMaxoutClassifier"]

#: method="auto" runs the exact search only below these sizes, else the coreset heuristic:
#: K-tuples before pruning (the serial kernel settles 1e9-1e10 K-tuples/s with pruning on
#: 2-D data, far fewer when a polarity fits poorly; see the benchmark),
#: hyperplanes to enumerate (about 2e5 per second), and for K = 1 (the linear problem,
#: solved by the ICE search) candidate hyperplanes
_MAX_EXACT_TUPLES = 1e10
_MAX_EXACT_PLANES = 2e5
_MAX_EXACT_LINEAR = 1e9
#: method="exact" is refused without a budget when even this K-tuple rate per core (strong
#: pruning) needs more than _MAX_SECONDS; and when its candidate family (bytes per candidate
#: and point: the boolean matrix, its float64 products and bitsets) would not fit in memory
_TUPLE_RATE = 1e10
_MAX_SECONDS = 86400.0
_BYTES_PER_ENTRY = 12


#: method="auto" beyond the exact search's range, without a time_limit: seconds for the
#: heuristic, the partition bounds and (where its sampled cost fits) the exact search
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


@dataclass
class _PolarityResult:
    """The best network of one polarity: ``value`` its realized errors on the unique points,
    ``lower`` a proven lower bound on that polarity's optimum (``bound_method`` says how),
    ``n_tuples`` the K-tuples of the exact searches' spaces (before pruning)."""

    value: float
    planes: list
    lower: float
    n_evaluated: int
    stop_reason: str | None
    bound_method: str = "conflicts"
    n_tuples: int = 0
    size: int = 0  # the partition bound's next block size ...
    block_seconds: float = math.inf  # ... and the predicted seconds of one of its blocks


def _linear_bound(res) -> tuple[float, str]:
    """The proven bound of a linear portfolio result and how it was proven: its value when
    complete (the IIS cover within its relative tolerance, as ICEClassifier takes it), else
    its lower bound."""
    return (res.value, "exact") if res.complete else (res.lower_bound, "linear")


class DeepICEMaxoutClassifier(BinaryClassifierMixin, BaseEstimator):
    """Two-layer maxout network with the provably minimal number of training errors.

    The network ``f(x) = max_k (w_k . x + b_k)`` with K hidden hyperplanes predicts one class
    (``polarity_``) where ``f > 0`` and the other elsewhere: one class region is a union of K
    half-spaces, the other a convex polyhedron (equivalently, a ReLU network with
    non-negative output weights). Both assignments of the classes are searched.

    ``method="exact"`` enumerates every subset of points a half-space can cut off (through
    hyperplanes through D unique points, exact on duplicates and degenerate data) and finds
    the K of them whose union errs least, with a bitset kernel and incumbent pruning (for
    K = 1, the linear problem, it runs the ICE search of :class:`ICEClassifier`). Its
    cost grows like ``(2 C(n, D))**K / K!`` before pruning: a hundred points in 2-D take
    about a second for K=2, and from a second to minutes for K=3 (pruning is weak when the
    first polarity searched fits the data poorly). ``method="coreset"`` is the Deep-ICE
    paper's heuristic for large data: exact solves on small blocks, the best networks kept
    and their blocks merged until a small coreset remains, every candidate scored on the
    full data. Beyond the exact search's range, ``method="auto"`` runs a portfolio within a
    budget: the best plane of the linear problem, and for each polarity the heuristic's
    network and one grown from that plane by local search, proven partition lower bounds (the
    sum of the exact optima of blocks of nearby points), and the exact search with the
    heuristic's errors as incumbent where its sampled cost fits; it stops as soon as the
    bound meets the errors (see the user guide).

    Parameters
    ----------
    n_hyperplanes : int, default=2
        K, the number of hidden hyperplanes (maxout units). More than the number of distinct
        training points never lowers the errors: the search uses that many, and the extra
        rows of ``hyperplanes_`` repeat a plane.
    method : {"auto", "exact", "coreset"}, default="auto"
        ``"auto"``: exact when it enumerates at most 2e5 hyperplanes and 1e10 K-tuples (for
        K = 1: at most 1e9 candidate hyperplanes), else the portfolio (``method_ ==
        "portfolio"``) within ``time_limit``, or 120 seconds without one: it returns
        sooner once it proves its network optimal. ``"exact"`` is refused up front, with
        the estimates, when its candidate family would not fit in memory, or when without
        a budget it could not finish within a day even with strong pruning.
    max_candidates : int, default=None
        Exact search: use only the hyperplanes through the first ``max_candidates``
        D-subsets of points (deterministic budget; the result is then not proven optimal).
    time_limit : float, default=None
        Seconds; the best network so far is returned when it is reached, with the best
        lower bound proven by then. Ctrl-C does the same (with a warning).
    coreset_size : int, default=20
        Block size of the coreset heuristic.
    n_shuffles : int, default=50
        Maximum number of shuffle-split-solve passes of the coreset heuristic.
    heap_size : int, default=10
        Number of best networks (and their blocks) the coreset heuristic keeps.
    shrink : float, default=0.95
        Factor by which the heap shrinks when a pass removes few points.
    coreset_stop : int, default=25
        The coreset heuristic solves the remaining points exactly once at most this many
        remain.
    device : {"auto", "cpu", "gpu"}, default="auto"
        Where the exact search runs: ``"cpu"`` (Numba bitset kernel), ``"gpu"`` (CuPy: the
        last two levels of the search as matrix products; raises if no GPU is usable) or
        ``"auto"`` (the GPU only when CuPy and a device are usable). The coreset heuristic
        solves its small blocks on the CPU.
    n_jobs : int, default=None
        Parallel workers over chunks of the K-tuple space (joblib), at most the usable
        cores.
    random_state : int, RandomState instance or None, default=None
        Shuffles of the coreset heuristic.
    verbose : int, default=0
        Progress on stderr.

    Attributes
    ----------
    hyperplanes_ : ndarray of shape (n_hyperplanes, n_features + 1)
        Row k is ``(w_k, b_k)`` in the original features.
    polarity_ : {1, -1}
        1: ``classes_[1]`` where ``f > 0``; -1: ``classes_[0]`` there.
    training_errors_ : float
        Weighted training errors of the fitted network (realized by ``predict``).
    is_optimal_ : bool
        True when the exact search was complete (or the lower bound meets the errors).
    lower_bound_ : float
        Proven lower bound on the minimal training errors of every network of the class
        (both polarities).
    lower_bound_method_ : str
        How ``lower_bound_`` is proven: ``"exact"`` (a complete exact search),
        ``"linear"`` (K = 1: the bounds of :class:`ICEClassifier`, IIS cover or partition),
        ``"partition"`` (the sum of the exact optima of the blocks of a partition of the
        points) or ``"conflicts"`` (identical points with both labels).
    gap_ : float
        ``(training_errors_ - lower_bound_) / max(training_errors_, 1)``; 0 when proven
        optimal.
    n_candidates_ : int
        K-tuples of half-spaces evaluated.
    n_tuples_ : int
        K-tuples of the spaces the exact searches covered, before pruning (0 when none
        ran): ``1 - n_candidates_ / n_tuples_`` is their pruning rate.
    method_ : str
        ``"exact"``, ``"coreset"`` or ``"portfolio"``.
    stop_reason_ : str or None
        Why a search stopped early (``"time_limit"``, ``"interrupted"``, ``"max_candidates"``,
        ``"bounds stalled"``: the portfolio's partition bounds stopped rising before the
        budget was spent, or a margin float64 cannot realize), None if none did.
    device_ : str
        The backend used by the exact search (``"cpu"`` or ``"gpu"``).
    classes_, n_features_in_, feature_names_in_
        As in scikit-learn.

    References
    ----------
    X. He and M. A. Little, "Deep-ICE: the first globally optimal algorithm for empirical
    risk minimization of two-layer maxout and ReLU networks".

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf import DeepICEMaxoutClassifier
    >>> X = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [2, 2], [-1, -1.0]])
    >>> y = np.array([0, 1, 1, 0, 0, 0])          # XOR-like: no line separates it
    >>> clf = DeepICEMaxoutClassifier(n_hyperplanes=2).fit(X, y)
    >>> clf.training_errors_, clf.is_optimal_
    (0.0, True)
    """

    _parameter_constraints: dict = {
        "n_hyperplanes": [Interval(Integral, 1, None, closed="left")],
        "method": [StrOptions({"auto", "exact", "coreset"})],
        "max_candidates": [Interval(Integral, 1, None, closed="left"), None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "coreset_size": [Interval(Integral, 2, None, closed="left")],
        "n_shuffles": [Interval(Integral, 1, None, closed="left")],
        "heap_size": [Interval(Integral, 1, None, closed="left")],
        "shrink": [Interval(Real, 0, 1, closed="neither")],
        "coreset_stop": [Interval(Integral, 1, None, closed="left")],
        "device": [StrOptions({"auto", "cpu", "gpu"})],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_hyperplanes=2,
        method="auto",
        max_candidates=None,
        time_limit=None,
        coreset_size=20,
        n_shuffles=50,
        heap_size=10,
        shrink=0.95,
        coreset_stop=25,
        device="auto",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.n_hyperplanes = n_hyperplanes
        self.method = method
        self.max_candidates = max_candidates
        self.time_limit = time_limit
        self.coreset_size = coreset_size
        self.n_shuffles = n_shuffles
        self.heap_size = heap_size
        self.shrink = shrink
        self.coreset_stop = coreset_stop
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    @guarded_fit
    def fit(self, X, y, sample_weight=None):
        """Find the maxout network with the fewest weighted training errors.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative integer weights (counts) totalling less than ``2**53``: the
            exact search counts errors in integers.

        Returns
        -------
        self : DeepICEMaxoutClassifier
        """
        return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        t0 = time.perf_counter()
        data = validate_binary(self, X, y, sample_weight)
        check_count_weights(data.sample_weight, "DeepICEMaxoutClassifier")
        Z, wpos, wneg = data.Z, data.wpos, data.wneg
        # more half-spaces than points never lower the errors: search that many, repeat one
        K = useful_planes(self.n_hyperplanes, len(Z))
        check_memory(8.0 * self.n_hyperplanes * (Z.shape[1] + 1),
                     f"a network of n_hyperplanes={self.n_hyperplanes} half-spaces",
                     f"More than {len(Z)} (the number of distinct training points) never "
                     "lower the training errors: use fewer.")
        n_jobs = effective_workers(self.n_jobs)
        self.method_ = self._choose_method(len(Z), Z.shape[1], K, n_jobs)
        backend = resolve_device(self.device)
        self.device_ = "gpu" if backend.name == "gpu" else "cpu"
        # both assignments of the classes to the union side; ties go to polarity +1
        searches = [(1, wpos, wneg), (-1, wneg, wpos)]
        if K == 1:
            # one half-space: the complement of a strictly realizable subset is strictly
            # realizable too, so the other polarity has the same optimum
            searches = searches[:1]
        if self.method_ == "portfolio":
            results = self._portfolio(Z, searches, K, backend, n_jobs, t0)
        else:
            results = self._direct(Z, searches, K, backend, n_jobs, t0)
        # the bound holds for the network class: the weaker of the polarities' bounds (a
        # polarity not searched, after an interrupt, only by its conflicting duplicates)
        conflicts = conflict_bound(wpos, wneg)
        bounds = [(r.lower, r.bound_method) for r in results.values()]
        if len(results) < len(searches):
            bounds.append((conflicts.value, conflicts.method))
        if not data.frame.certifiable:  # the searches' geometric decisions are unreliable
            bounds = [(conflicts.value, conflicts.method)]
            for r in results.values():
                r.stop_reason = r.stop_reason or THIN_POINTS
        self.lower_bound_, self.lower_bound_method_ = min(bounds, key=lambda b: b[0])
        # each network is scored as the fitted model: one whose margins the original units
        # do not resolve makes other errors than the frame's count, and the errors it makes
        # are its value (integer counts below 2**53: the sums are exact), so the network
        # returned is the best one that realizes its count; the bounds do not depend on it
        for polarity, r in results.items():
            self._use_network(data, polarity, r.planes)
            realized = self._training_errors(data)
            if realized != r.value:
                r.stop_reason = r.stop_reason or UNREALIZABLE_MARGIN
            r.value = realized
        self.polarity_ = min(results, key=lambda p: (results[p].value, -p))
        best = results[self.polarity_]
        self._use_network(data, self.polarity_, best.planes)
        self.training_errors_ = best.value
        self.n_candidates_ = sum(r.n_evaluated for r in results.values())
        self.n_tuples_ = sum(r.n_tuples for r in results.values())
        self.is_optimal_ = bool(self.training_errors_ <= self.lower_bound_)
        self.gap_ = max(self.training_errors_ - self.lower_bound_, 0.0) / max(
            self.training_errors_, 1.0)
        # the returned network's own reason first (the other polarity's may only say that
        # its network, not returned, failed to realize its count)
        self.stop_reason_ = next((r.stop_reason for r in (best, *results.values())
                                  if r.stop_reason), None)
        if not self.is_optimal_:
            why = "" if self.stop_reason_ is None else f", stopped early ({self.stop_reason_})"
            warnings.warn(
                f"DeepICEMaxoutClassifier ({self.method_}{why}) returns a network with "
                f"{self.training_errors_:g} errors; optimality is not proven (lower bound "
                f"{self.lower_bound_:g}, {self.lower_bound_method_}; gap "
                f"{100 * self.gap_:.1f}%).",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _use_network(self, data, polarity, planes):
        """Make the network of ``planes`` (in the frame of ``data``) the fitted model."""
        planes = planes + planes[-1:] * (self.n_hyperplanes - len(planes))
        self.polarity_ = polarity
        self.hyperplanes_ = np.array([np.r_[data.frame.to_original(a, b)] for a, b in planes])

    def _direct(self, Z, searches, K, backend, n_jobs, t0):
        """The exact search or the coreset heuristic alone, one polarity after the other.

        An exact search of two polarities first runs the heuristic briefly on each (when
        the data exceed a few blocks): the polarity it finds better is searched first, below
        its heuristic's errors, so the other one only has to be ruled out, with a strong
        bound from the start."""
        results: dict[int, _PolarityResult] = {}
        seeds: dict[int, _PolarityResult] = {}
        if (self.method_ == "exact" and K > 1 and len(searches) == 2
                and len(Z) > 2 * self.coreset_size):
            seeds = self._seed_polarities(Z, searches, K, t0)
            if any(r.stop_reason == "interrupted" for r in seeds.values()):
                return seeds  # Ctrl-C: the heuristic's networks and bounds
            searches = sorted(searches, key=lambda s: (seeds[s[0]].value, -s[0]))
        for k, (polarity, want_w, other_w) in enumerate(searches):
            remaining = None
            if self.time_limit is not None:  # half of the budget left for the first polarity
                remaining = (max(self.time_limit - (time.perf_counter() - t0), 1e-3)
                             / (len(searches) - k))
            bound = np.inf
            if results:  # the second polarity only has to beat the first
                first = next(iter(results.values())).value
                # ties go to polarity +1 (errors are integers in the exact search)
                bound = first + 1 if polarity == 1 and self.method_ == "exact" else first
            elif polarity in seeds:  # at most the heuristic's errors
                bound = seeds[polarity].value + 1
            try:
                res = self._search(Z, want_w, other_w, K, remaining, backend, bound, n_jobs)
            except KeyboardInterrupt:  # before the search could stop by itself (preparing
                # its candidate family) or after (realizing its network): what was found
                for p, seed in seeds.items():
                    results.setdefault(p, seed)
                if not results:
                    raise
                return self._interrupted(results)
            seed = seeds.get(polarity)
            if seed is not None and seed.value < res.value:  # the search stopped early
                res.value, res.planes = seed.value, seed.planes
            results[polarity] = res
            if res.stop_reason == "interrupted":  # Ctrl-C ends the fit, not one polarity
                break
        return results

    def _seed_polarities(self, Z, searches, K, t0):
        """The coreset heuristic on each polarity for a moment: its networks, by polarity."""
        seconds = _SEED_SECONDS
        if self.time_limit is not None:
            seconds = min(seconds, _SEED_SHARE * self.time_limit)
        seed = check_random_state(self.random_state).randint(2**31)
        seeds = {}
        for polarity, want_w, other_w in searches:
            res = coreset_union(Z, want_w, other_w, K, block_size=self.coreset_size,
                                heap_size=self.heap_size, stop_size=self.coreset_stop,
                                shrink=self.shrink, max_passes=self.n_shuffles,
                                rng=np.random.default_rng(seed), time_limit=seconds)
            interrupted = res.stop_reason == "interrupted"
            seeds[polarity] = _PolarityResult(res.value, res.planes, res.lower_bound,
                                              res.n_evaluated,
                                              "interrupted" if interrupted else None,
                                              "partition")
            if interrupted:
                break
        return seeds

    def _portfolio(self, Z, searches, K, backend, n_jobs, t0):
        """method="auto" beyond the exact search's range: the best plane of the linear
        problem (within a share of the budget), and for each polarity the coreset
        heuristic's network and a local search grown from that plane; partition bounds
        (which stop once they prove the best network optimal or rule a polarity out), then
        the exact search with the best network as its incumbent, better polarity first,
        where its sampled cost fits the budget; what time is left improves the bounds of the
        polarities still open."""
        budget = self.time_limit if self.time_limit is not None else _DEFAULT_BUDGET
        deadline = t0 + budget
        seed = check_random_state(self.random_state).randint(2**31)
        results: dict[int, _PolarityResult] = {}

        def left():
            return deadline - time.perf_counter()

        def incumbent():
            return min(r.value for r in results.values())

        def say(msg):
            if self.verbose:
                print(f"Deep-ICE: {msg} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr,
                      flush=True)

        try:
            # one plane is a network too; the local search grows it into one of K
            # half-spaces: never worse than the linear problem's best plane within its share
            linear = solve_portfolio(Z, Z, searches[0][1], searches[0][2],
                                     time_limit=max(min(_LINEAR_SHARE * budget, left()), 1e-3),
                                     n_jobs=n_jobs)
            say(f"linear seed: {linear.value:g} errors, bound {linear.lower_bound:g}")
            if linear.stop_reason == "interrupted":  # Ctrl-C: the best plane so far
                polarity, want_w, other_w = searches[0]
                planes, value, _ = realize_union(Z, [linear.positive], want_w, other_w)
                conflicts = conflict_bound(want_w, other_w)
                results[polarity] = _PolarityResult(value, planes, conflicts.value, 0,
                                                    "interrupted", conflicts.method)
                return results
            for polarity, want_w, other_w in searches:
                res = coreset_union(
                    Z, want_w, other_w, K, block_size=self.coreset_size,
                    heap_size=self.heap_size, stop_size=self.coreset_stop, shrink=self.shrink,
                    max_passes=self.n_shuffles, rng=np.random.default_rng(seed),
                    time_limit=max(min(_HEURISTIC_SHARE * budget, left()), 1e-3))
                results[polarity] = _PolarityResult(
                    res.value, res.planes, res.lower_bound, res.n_evaluated,
                    "interrupted" if res.stop_reason == "interrupted" else None, "partition")
                say(f"polarity {polarity:+d}: heuristic {res.value:g} errors, bound "
                    f"{res.lower_bound:g}")
                if res.stop_reason == "interrupted":
                    return results
                side = linear.positive if polarity == searches[0][0] else ~linear.positive
                if K == 1:  # the linear problem itself: its plane and its proven bound
                    self._adopt(Z, [side], want_w, other_w, results[polarity])
                    lower, how = _linear_bound(linear)
                    if lower > results[polarity].lower:
                        results[polarity].lower, results[polarity].bound_method = lower, how
                    continue
                if self._grow(Z, side, want_w, other_w, K, results[polarity],
                              min(_GROW_SHARE * budget, left())):
                    return results
                say(f"polarity {polarity:+d}: grown from the linear seed, "
                    f"{results[polarity].value:g} errors")
            # the better polarity first: the other then only has to be ruled out
            order = sorted(results, key=lambda p: (results[p].value, -p))
            data = {p: (w, o) for p, w, o in searches}
            planes = n_combinations(len(Z), Z.shape[1]) if Z.shape[1] else 1
            # an exact search whose family is cheap is tried before the bounds (it often
            # proves at once what partitions of small blocks never reach)
            cheap = planes / PLANE_RATE <= _CHEAP_SHARE * budget
            for phase in ("exact", "bounds") if cheap else ("bounds", "exact"):
                if phase == "bounds":
                    if self._bounds(Z, data, K, results, order, t0 + _BOUND_SHARE * budget,
                                    seed, say):
                        return results
                    continue
                for p in order if K > 1 else ():
                    if results[p].lower >= incumbent() or left() <= 0:
                        continue
                    if self._exact_phase(Z, data[p], K, results[p], incumbent(), left,
                                         backend, n_jobs, say):
                        return results
            if self._bounds(Z, data, K, results, order, deadline, seed + 1, say):
                return results
        except KeyboardInterrupt:  # between the phases (each phase stops by itself)
            if not results:
                raise
            return self._interrupted(results)
        # a polarity still open ran out of budget, or its partition bounds stopped rising
        why = "time_limit" if left() <= 0 else "bounds stalled"
        for r in results.values():
            if r.lower < incumbent() and r.stop_reason is None:
                r.stop_reason = why
        return results

    @staticmethod
    def _interrupted(results):
        """Ctrl-C outside the searches that stop by themselves: ``results``, the networks
        found so far, every polarity marked interrupted (with a warning)."""
        warnings.warn("Deep-ICE interrupted: returning the best network found so far",
                      RuntimeWarning, stacklevel=7)
        for r in results.values():
            r.stop_reason = "interrupted"
        return results

    def _bounds(self, Z, data, K, results, order, until, seed, say):
        """Partition bounds until ``until`` (a ``time.perf_counter()`` value), one partition
        at a time, always for the open polarity whose bound is the fit's (the lowest; the
        others' cannot raise it), each partition's blocks growing while the next is
        predicted to fit; True if Ctrl-C stopped them."""
        incumbent = min(r.value for r in results.values())
        stalled = dict.fromkeys(order, 0)  # partitions in a row without progress
        while time.perf_counter() < until:
            open_ = sorted((results[p].lower, p) for p in order
                           if results[p].lower < incumbent
                           and results[p].bound_method != "exact"
                           and stalled[p] < _STALLED_PARTITIONS)
            if not open_:
                return False
            p = open_[0][1]
            seed += len(order)
            before, size = results[p].lower, results[p].size
            if self._improve_bound(Z, data[p], K, results[p], incumbent,
                                   until - time.perf_counter(), seed):
                return True
            improved = results[p].lower > before or results[p].size > size
            stalled[p] = 0 if improved else stalled[p] + 1
            if improved:
                say(f"polarity {p:+d}: bound {results[p].lower:g} ({results[p].bound_method}, "
                    f"blocks of {results[p].size} points next)")
        return False

    def _improve_bound(self, Z, weights, K, res, target, seconds, seed):
        """Raise ``res.lower`` with one partition bound within ``seconds`` (stopped once it
        reaches ``target``); True if Ctrl-C stopped it."""
        if res.lower >= target or seconds <= 0:
            return False
        want_w, other_w = weights
        got = partition_bound(Z, want_w, other_w, K, time_limit=seconds, planes=res.planes,
                              random_state=seed, target=target, max_partitions=1,
                              start=PolarityBound(res.lower, res.bound_method, size=res.size,
                                                  block_seconds=res.block_seconds))
        res.lower, res.bound_method = got.value, got.method
        res.size, res.block_seconds = got.size, got.block_seconds
        if got.interrupted:
            res.stop_reason = "interrupted"
        return got.interrupted

    def _exact_phase(self, Z, weights, K, res, incumbent, left, backend, n_jobs, say):
        """The exact search of one polarity below ``incumbent`` when its family and its
        sampled cost fit the time ``left()``; ``res`` takes any better network and, when the
        search completes, its proven optimum. True if Ctrl-C stopped it."""
        want_w, other_w = weights
        planes = n_combinations(len(Z), Z.shape[1]) if Z.shape[1] else 1
        if planes / PLANE_RATE > left() / 2:
            say(f"exact search skipped: its {planes:.3g} hyperplanes would take about "
                f"{planes / PLANE_RATE:.0f} s")
            return False
        try:
            check_memory(_BYTES_PER_ENTRY * (2 * planes + 2) * len(Z), "", "")
        except MemoryError:
            say("exact search skipped: its candidate family would not fit in memory")
            return False
        problem = prepare_union(Z, want_w, other_w, K)
        res.n_tuples += problem.n_tuples
        est = estimate_union(problem, incumbent, time_limit=_SAMPLE_SHARE * max(left(), 0))
        if est.found is not None:  # the sample met a better network: keep it
            self._adopt(Z, problem.family[est.found], want_w, other_w, res)
            incumbent = min(incumbent, res.value)
        seconds = est.seconds / n_jobs
        say(f"exact search below {incumbent:g}: about {seconds:.0f} s estimated, "
            f"{left():.0f} s left")
        if seconds > left():
            return False
        out = exact_union(Z, want_w, other_w, K, backend=backend, upper_bound=incumbent,
                          time_limit=max(left(), 1e-3), n_jobs=n_jobs, verbose=self.verbose,
                          problem=problem, work=est.work, lower_bound=res.lower)
        res.n_evaluated += out.n_evaluated
        if out.value < incumbent:
            self._adopt(Z, out.sets, want_w, other_w, res)
        if out.complete and res.lower < min(out.value, incumbent):
            res.lower, res.bound_method = min(out.value, incumbent), "exact"
        if out.stop_reason is not None:
            res.stop_reason = out.stop_reason
        return out.stop_reason == "interrupted"

    @staticmethod
    def _grow(Z, side, want_w, other_w, K, res, seconds):
        """Local search from the half-space whose inside is ``side``: the other K - 1 start
        empty and every half-space in turn is re-solved exactly on the points the others
        leave out, for at most ``seconds``; ``res`` takes the network if it errs less. True
        if Ctrl-C stopped it."""
        planes = realize_union(Z, [side], want_w, other_w)[0]
        empty = (np.zeros(Z.shape[1]), -1.0)
        planes, value, interrupted = refine(Z, planes + [empty] * (K - 1), want_w, other_w,
                                            deadline=time.perf_counter() + max(seconds, 0.0))
        if value < res.value:
            res.value, res.planes = value, planes
        if interrupted:
            res.stop_reason = "interrupted"
        return interrupted

    @staticmethod
    def _adopt(Z, sets, want_w, other_w, res):
        """Realize the subsets ``sets`` and keep them in ``res`` if they err less there."""
        planes, value, _ = realize_union(Z, sets, want_w, other_w)
        if value < res.value:
            res.value, res.planes = value, planes

    def _choose_method(self, n: int, dim: int, K: int, n_jobs: int) -> str:
        """``"exact"``, ``"coreset"`` or ``"portfolio"``; refuses an exact search it cannot
        finish or hold."""
        planes = n_combinations(n, dim) if dim else 1
        if self.max_candidates is not None:
            planes = min(planes, self.max_candidates)
        if self.method == "coreset":
            return "coreset"
        if K == 1:  # the ICE search (its own size checks) on the linear problem
            return ("exact" if self.method == "exact" or planes <= _MAX_EXACT_LINEAR
                    else "portfolio")
        subsets = 2 * planes + 2  # candidate half-spaces: about two per hyperplane
        # non-decreasing K-tuples of candidates, C(subsets + K - 1, K), in log10
        log_tuples = (math.lgamma(subsets + K) - math.lgamma(K + 1)
                      - math.lgamma(subsets)) / math.log(10)
        if self.method == "auto":
            small = planes <= _MAX_EXACT_PLANES and log_tuples <= math.log10(_MAX_EXACT_TUPLES)
            return "exact" if small else "portfolio"
        what = (f"DeepICEMaxoutClassifier(method='exact') with n_hyperplanes={K} on {n} "
                f"distinct points in {dim}-D ({subsets:.3g} candidate half-spaces)")
        instead = ("Use method='coreset' (or 'auto') for a heuristic with a proven lower "
                   "bound, max_candidates=... to search fewer hyperplanes, or fit on fewer "
                   "points.")
        check_memory(_BYTES_PER_ENTRY * subsets * n, what, instead)
        seconds = 10 ** (log_tuples - math.log10(_TUPLE_RATE * n_jobs))
        if self.time_limit is None and self.max_candidates is None and seconds > _MAX_SECONDS:
            raise ValueError(
                f"{what} has about 1e{log_tuples:.0f} K-tuples of half-spaces to search; even "
                f"with strong pruning ({_TUPLE_RATE:.0e} per second on each of {n_jobs} "
                f"usable cores) that is about {seconds / 86400:.3g} days. Give it a budget "
                "(time_limit=...) to get the best network found in that time, or: " + instead
            )
        return "exact"

    def _search(self, Z, want_w, other_w, K, time_limit, backend, upper_bound, n_jobs):
        """One polarity: the best network found, realized on ``Z``, with its proofs."""
        if self.method_ == "coreset":
            res = coreset_union(
                Z, want_w, other_w, K, block_size=self.coreset_size,
                heap_size=self.heap_size, stop_size=self.coreset_stop, shrink=self.shrink,
                max_passes=self.n_shuffles,
                rng=np.random.default_rng(check_random_state(self.random_state).randint(2**31)),
                time_limit=time_limit, verbose=self.verbose,
            )
            return _PolarityResult(res.value, res.planes, res.lower_bound, res.n_evaluated,
                                   res.stop_reason, "partition")
        if K == 1:
            # one half-space: the exact linear problem, solved as ICEClassifier solves it
            # (enumeration and IIS cover, with their proven bounds when a budget stops them)
            res = solve_portfolio(Z, Z, want_w, other_w, backend=backend,
                                  max_candidates=self.max_candidates, time_limit=time_limit,
                                  n_jobs=n_jobs, verbose=self.verbose)
            sets, n_eval, n_tuples = [res.positive], res.n_candidates, 0
            lower, how = _linear_bound(res)
        else:
            problem = prepare_union(Z, want_w, other_w, K, self.max_candidates)
            res = exact_union(Z, want_w, other_w, K, backend=backend, upper_bound=upper_bound,
                              time_limit=time_limit, n_jobs=n_jobs, verbose=self.verbose,
                              problem=problem)
            sets, n_eval, n_tuples = res.sets, res.n_evaluated, problem.n_tuples
            # a complete search proves that no network errs less than its value (or than
            # the bound it was asked to beat); otherwise only conflicting duplicates bound it
            conflicts = conflict_bound(want_w, other_w)
            lower, how = ((min(res.value, upper_bound), "exact") if res.complete
                          else (conflicts.value, conflicts.method))
        planes, value, exact = realize_union(Z, sets, want_w, other_w)
        stop_reason = res.stop_reason
        if not exact:
            stop_reason = stop_reason or UNREALIZABLE_MARGIN
        return _PolarityResult(value, planes, lower, n_eval, stop_reason, how, n_tuples)

    def decision_function(self, X):
        """``polarity_ * max_k (w_k . x + b_k)``: positive for ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        f = np.max(X @ self.hyperplanes_[:, :-1].T + self.hyperplanes_[:, -1], axis=1)
        return self.polarity_ * f
