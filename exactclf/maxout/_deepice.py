"""DeepICEMaxoutClassifier: two-layer maxout networks with the fewest training errors."""

from __future__ import annotations

import math
import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._backend import resolve_device
from .._base import BinaryClassifierMixin, check_count_weights, validate_binary
from .._budget import LONGEST_SEARCH
from .._certificate import (
    ZERO_ONE_OBJECTIVE,
    BoundMethod,
    Certificate,
    StopReason,
    Witness,
    class_weighted,
    data_fingerprint,
)
from .._combinatorics import n_combinations
from .._fit_guard import guarded_fit
from .._resources import check_memory, effective_workers
from .._trace import FitTrace
from .._warnings import warn
from .._zero_one._bounds import conflict_bound
from ._exact import family_bytes, useful_planes
from ._portfolio import MaxoutSearch, SearchSettings
from ._witness import cover_witness

__all__ = ["DeepICEMaxoutClassifier"]

#: method="auto" runs the exact search only below these sizes, else the portfolio:
#: K-tuples before pruning (the serial kernel settles 1e9-1e10 K-tuples/s with pruning on
#: 2-D data, far fewer when a polarity fits poorly; see the benchmark),
#: hyperplanes to enumerate (about 2e5 per second), and for K = 1 (the linear problem,
#: solved by the ICE search) candidate hyperplanes
_MAX_EXACT_TUPLES = 1e10
_MAX_EXACT_PLANES = 2e5
_MAX_EXACT_LINEAR = 1e9
#: method="exact" is refused without a budget when even this K-tuple rate per core (strong
#: pruning) needs more than LONGEST_SEARCH
_TUPLE_RATE = 1e10
#: why a bound without a compact witness has none, by ``lower_bound_method_``
_NO_WITNESS = {
    BoundMethod.EXACT: "a complete search (an enumeration of the networks of each polarity, pruned "
             "against an incumbent; for K = 1 possibly the IIS cover) has no compact witness",
    BoundMethod.PARTITION: "a partition bound sums the optima of blocks of the points, each proven "
                 "by an enumeration of the block's networks: no compact witness",
    BoundMethod.LINEAR: "the bound of the linear problem (K = 1) proven by ICEClassifier's search "
              "keeps no witness here: a partition sum, or IISs without exact multipliers "
              "on the samples",
}
#: a cover bound has a witness when both polarities' bounds have one
_NO_WITNESS.update(dict.fromkeys(
    (BoundMethod.OBSTRUCTION_COVER, BoundMethod.PAIR_COVER, BoundMethod.JOINT_COVER),
    "the obstructions are kept only when covers (or partitions) prove the bound for every "
    "polarity, and every IIS of them has exact multipliers on the samples; here one does not"))


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
    network, one grown from that plane by local search and, for K >= 2, networks refined by
    the same local search from starts of a smooth surrogate (a log-sum-exp maxout fitted by
    L-BFGS), proven partition lower bounds (the
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
        lower bound proven by then. Ctrl-C does the same (with a warning). The portfolio
        shares its time by the wall clock, so with the same ``random_state`` two fits
        cut short may return different networks and bounds (each valid, and a proven
        optimum has the same errors on every run). The first fit after installing also
        compiles the numba kernels, which no limit can stop: on a small machine it can
        overrun ``time_limit`` by tens of seconds (``exactclf demo`` compiles them once).
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
        Where the exact search runs: ``"cpu"`` (Numba bitset kernel), ``"gpu"`` (its Numba
        CUDA counterpart, or CuPy array code where Numba cannot compile kernels; extra
        ``exactclf[gpu]``; raises if no GPU is usable) or ``"auto"``, which keeps the CPU:
        the GPU kernel has not yet beaten a 16-core CPU on a measured search (see
        ``exactclf._backend.GPU_BREAK_EVEN``). The coreset heuristic solves its small
        blocks on the CPU.
    n_jobs : int, default=None
        Parallel workers over chunks of the K-tuple space (joblib), at most the usable
        cores.
    random_state : int, RandomState instance or None, default=None
        Shuffles of the coreset heuristic.
    verbose : int, default=0
        Progress on stderr.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, as in scikit-learn: an error on a sample of class ``c``
        costs its sample weight times ``class_weight[c]``. The search counts errors in
        integers, so the products must be integers (a dict of integer weights such as
        ``{0: n_1, 1: n_0}``, proportional to ``"balanced"``).

    Attributes
    ----------
    hyperplanes_ : ndarray of shape (n_hyperplanes, n_features + 1)
        Row k is ``(w_k, b_k)`` in the original features.
    polarity_ : {1, -1}
        1: ``classes_[1]`` where ``f > 0``; -1: ``classes_[0]`` there.
    certificate_ : Certificate
        What the fit proves about the network returned (see :func:`exactclf.verify`):
        ``training_errors_``, ``is_optimal_``, ``lower_bound_``, ``lower_bound_method_``,
        ``gap_``, ``stop_reason_`` and ``fit_time_`` are views of it. Its witness: the
        conflicting duplicates when they are the bound, else none (an enumeration has no
        compact witness).
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
        points), ``"obstruction cover"`` (sets of points no network classifies all
        correctly: one of a class in the convex hull of points of the other),
        ``"pair obstruction cover"`` (those, and K + 1 points of a class whose every pair
        is blocked by a convex hull of points of the other), ``"joint cover"`` (one cover
        of those obstructions together with blocks of partitions, each holding at least
        its exact optimum's errors) or ``"conflicting duplicates"`` (identical points with
        both labels).
    gap_ : float
        ``(training_errors_ - lower_bound_) / training_errors_`` (0 when proven optimal or
        without errors), invariant to the units of the weights.
    n_candidates_ : int
        K-tuples of half-spaces evaluated.
    n_tuples_ : int
        K-tuples of the spaces the exact searches covered, before pruning (0 when none
        ran): ``1 - n_candidates_ / n_tuples_`` is their pruning rate.
    fit_trace_ : list of TraceRow
        Where the fit's time went: a row per stage run (the linear seed, the heuristics,
        obstruction covers, level and partition bounds, each exact search, the joint cover,
        the search that uses the time left), with ``stage``, ``start`` and ``seconds`` (from
        the start of ``fit``), the ``incumbent`` and the network class's proven ``bound``
        after it (0 until both polarities have one), and ``stop``. ``row._asdict()`` gives a
        row as a dict; ``verbose`` prints each row as it ends.
    method_ : str
        ``"exact"``, ``"coreset"`` or ``"portfolio"``.
    stop_reason_ : StopReason or None
        Why a search stopped early (``"time_limit"``, ``"interrupted"``, ``"max_candidates"``,
        ``"bounds stalled"``: the portfolio's bounds stopped rising, and its further
        heuristic runs stopped finding better networks, before the budget was spent; or a
        margin float64 cannot realize), None if none did.
    fit_time_ : float
        Seconds the fit took.
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
        "class_weight": [dict, StrOptions({"balanced"}), None],
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
        class_weight=None,
    ):
        self.class_weight = class_weight
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
        trace = FitTrace(t0, type(self).__name__, self.verbose)
        settings = SearchSettings(
            self.method_, self.time_limit, self.max_candidates, self.coreset_size,
            self.heap_size, self.coreset_stop, self.shrink, self.n_shuffles,
            seed=check_random_state(self.random_state).randint(2**31), backend=backend,
            n_jobs=n_jobs, verbose=self.verbose, trace=trace)
        results = MaxoutSearch(Z, searches, K, settings, t0, U=data.U).run()
        # the bound holds for the network class: the weaker of the polarities' bounds (a
        # polarity not searched, after an interrupt, only by its conflicting duplicates)
        conflicts = conflict_bound(wpos, wneg)
        bounds = [(r.lower, r.bound_method) for r in results.values()]
        if len(results) < len(searches):
            bounds.append((conflicts.value, conflicts.method))
        if not data.frame.certifiable:  # the searches' geometric decisions are unreliable
            bounds = [(conflicts.value, conflicts.method)]
            for r in results.values():
                r.stop_reason = r.stop_reason or StopReason.THIN_POINTS
        bound, how = min(bounds, key=lambda b: b[0])
        # each network is scored as the fitted model: one whose margins the original units
        # do not resolve makes other errors than the frame's count, and the errors it makes
        # are its value (integer counts below 2**53: the sums are exact), so the network
        # returned is the best one that realizes its count; the bounds do not depend on it
        found = {}
        for polarity, r in results.items():
            self._use_network(data, polarity, r.planes)
            realized = self._training_errors(data)
            if realized != r.value:
                # more time would not give the network its search found; other units might
                # (the reason ICEClassifier gives, whatever stopped the search, unless the
                # frame itself was too thin to trust)
                r.stop_reason = (StopReason.UNREALIZABLE_MARGIN if data.frame.certifiable
                                 else r.stop_reason or StopReason.UNREALIZABLE_MARGIN)
                found[polarity] = r.value
            r.value = realized
        polarity = min(results, key=lambda p: (results[p].value, -p))
        best = results[polarity]
        self._use_network(data, polarity, best.planes)
        self.n_candidates_ = sum(r.n_evaluated for r in results.values())
        self.fit_trace_ = list(trace.rows)
        self.n_tuples_ = sum(r.n_tuples for r in results.values())
        # the returned network's own reason first (the other polarity's may only say that
        # its network, not returned, failed to realize its count)
        stop_reason = next((r.stop_reason for r in (best, *results.values())
                            if r.stop_reason), None)
        witness = self._witness(data, results, bound, how, conflicts.method,
                                K if len(results) == len(searches) else None)
        self.certificate_ = Certificate(
            type(self).__name__,
            f"maxout networks of K={self.n_hyperplanes} half-spaces (one class where any "
            "of them is positive), both polarities",
            class_weighted(ZERO_ONE_OBJECTIVE, self.class_weight), best.value, bound, how,
            is_optimal=bool(best.value <= bound),
            stop_reason=None if stop_reason is None else StopReason(stop_reason),
            fit_time=time.perf_counter() - t0,
            fingerprint=data_fingerprint(data.X, y, sample_weight), n_samples=len(data.X),
            witness=witness)
        if not self.is_optimal_:
            why = "" if self.stop_reason_ is None else f", stopped early ({self.stop_reason_})"
            lost = ""
            if found and min(found.values()) < best.value:
                lost = (f" Its search found a network with {min(found.values()):g} errors whose "
                        "margins float64 cannot hold in the data's units; fitting on "
                        "standardized features (StandardScaler) may realize it.")
            warn(
                f"DeepICEMaxoutClassifier ({self.method_}{why}) returns a network with "
                f"{self.training_errors_:g} errors; optimality is not proven (lower bound "
                f"{self.lower_bound_:g}, {self.lower_bound_method_}; gap "
                f"{100 * self.gap_:.1f}%).{lost}",
                ConvergenceWarning,
            )
        return self

    def _witness(self, data, results, bound, how: str, conflicts_method: str, K) -> Witness:
        """The evidence of the certificate's ``bound`` (proven ``how``) that
        :func:`exactclf.verify` re-checks: the conflicting duplicates, or every polarity's
        obstructions and blocks when covers and partitions prove it for each, for the
        model's ``n_hyperplanes`` (``K``: the half-spaces searched, None when a polarity was
        not)."""
        if how == conflicts_method:
            return Witness("conflicts", "re-derived from the data: identical samples with "
                           "different labels")
        try:
            evidence = (cover_witness(data, self.classes_, results, K, bound)
                        if K == self.n_hyperplanes else None)
        except KeyboardInterrupt:  # the model and its bound stand; only the witness is cut
            warn("DeepICEMaxoutClassifier interrupted while writing the witness of its bound: "
                 "the certificate keeps none.", UserWarning)
            evidence = None
        if evidence is None or not any(e["obstructions"] for e in evidence["polarities"]):
            # (blocks alone, a partition's: nothing in them to re-check)
            return Witness("none", _NO_WITNESS[how])
        counts = ", ".join(f"{len(e['obstructions'])} obstructions"
                           + (f" and {len(e['blocks'])} blocks" if e["blocks"] else "")
                           + f" for polarity {e['polarity']:+d}"
                           for e in evidence["polarities"])
        return Witness("maxout_cover", f"{counts}: sets of samples no network of {K} "
                       "half-spaces classifies all correctly, each IIS of them certified by "
                       "exact multipliers on the samples, and the blocks' proven optima "
                       "(enumerations, not re-checkable); the bound is the least weight of "
                       "errors meeting them all, plus the conflicting duplicates", evidence)

    def _use_network(self, data, polarity, planes):
        """Make the network of ``planes`` (in the frame of ``data``) the fitted model."""
        planes = planes + planes[-1:] * (self.n_hyperplanes - len(planes))
        self.polarity_ = polarity
        self.hyperplanes_ = np.array([np.r_[data.frame.to_original(a, b)] for a, b in planes])

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
        check_memory(family_bytes(n, planes), what, instead)
        seconds = 10 ** (log_tuples - math.log10(_TUPLE_RATE * n_jobs))
        if self.time_limit is None and self.max_candidates is None and seconds > LONGEST_SEARCH:
            raise ValueError(
                f"{what} has about 1e{log_tuples:.0f} K-tuples of half-spaces to search; even "
                f"with strong pruning ({_TUPLE_RATE:.0e} per second on each of {n_jobs} "
                f"usable cores) that is about {seconds / 86400:.3g} days. Give it a budget "
                "(time_limit=...) to get the best network found in that time, or: " + instead
            )
        return "exact"

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
