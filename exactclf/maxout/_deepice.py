"""DeepICEMaxoutClassifier: two-layer maxout networks with the fewest training errors."""

from __future__ import annotations

import math
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
from .._base import BinaryClassifierMixin, reset_fitted, validate_binary
from .._combinatorics import n_combinations
from .._resources import check_memory, effective_workers
from ..linear._min01 import solve_min01
from ._coreset import coreset_union
from ._exact import exact_union, realize_union, useful_planes

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


@dataclass
class _PolarityResult:
    """The best network of one polarity: ``value`` its realized errors on the unique points,
    ``lower`` a proven lower bound on that polarity's optimum."""

    value: float
    planes: list
    lower: float
    n_evaluated: int
    stop_reason: str | None


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
    full data. It returns a proven ``lower_bound_`` too (the largest exact block optimum).

    Parameters
    ----------
    n_hyperplanes : int, default=2
        K, the number of hidden hyperplanes (maxout units). More than the number of distinct
        training points never lowers the errors: the search uses that many, and the extra
        rows of ``hyperplanes_`` repeat a plane.
    method : {"auto", "exact", "coreset"}, default="auto"
        ``"auto"``: exact when it enumerates at most 2e5 hyperplanes and 1e10 K-tuples (for
        K = 1: at most 1e9 candidate hyperplanes), else coreset. ``"exact"`` is refused up
        front, with the estimates, when its candidate family would not fit in memory, or
        when without a budget it could not finish within a day even with strong pruning.
    max_candidates : int, default=None
        Exact search: use only the hyperplanes through the first ``max_candidates``
        D-subsets of points (deterministic budget; the result is then not proven optimal).
    time_limit : float, default=None
        Seconds; the best network so far is returned when it is reached. Ctrl-C does the
        same (with a warning).
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
        Proven lower bound on the minimal training errors.
    n_candidates_ : int
        K-tuples of half-spaces evaluated.
    method_ : str
        ``"exact"`` or ``"coreset"``.
    stop_reason_ : str or None
        Why a search stopped early (``"time_limit"``, ``"interrupted"``, ``"max_candidates"``,
        or a margin float64 cannot realize), None if none did.
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
    def fit(self, X, y, sample_weight=None):
        """Find the maxout network with the fewest weighted training errors.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative integer weights (counts).

        Returns
        -------
        self : DeepICEMaxoutClassifier
        """
        reset_fitted(self)
        try:
            return self._fit(X, y, sample_weight)
        except Exception:  # a failed fit leaves no attribute of it (classes_ included)
            reset_fitted(self)
            raise

    def _fit(self, X, y, sample_weight):
        t0 = time.perf_counter()
        data = validate_binary(self, X, y, sample_weight)
        if np.any(data.sample_weight % 1):
            raise ValueError(
                "DeepICEMaxoutClassifier needs integer sample weights (counts): its exact "
                "kernel counts errors with bitsets."
            )
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
        results: dict[int, _PolarityResult] = {}
        searches = ((2, 1, wpos, wneg), (1, -1, wneg, wpos))
        if K == 1:
            # one half-space: the complement of a strictly realizable subset is strictly
            # realizable too, so the other polarity has the same optimum
            searches = ((1, 1, wpos, wneg),)
        for share, polarity, want_w, other_w in searches:
            remaining = None
            if self.time_limit is not None:  # half of the budget left for the first polarity
                remaining = max(self.time_limit - (time.perf_counter() - t0), 1e-3) / share
            # the second polarity only has to beat the first (ties go to polarity +1)
            bound = results[1].value if results else np.inf
            res = self._search(Z, want_w, other_w, K, remaining, backend, bound, n_jobs)
            results[polarity] = res
            if res.stop_reason == "interrupted":  # Ctrl-C ends the fit, not one polarity
                break
        self.polarity_ = min(results, key=lambda p: (results[p].value, -p))
        best = results[self.polarity_]
        # a polarity not searched (interrupted) is bounded only by conflicting duplicates
        lower = min([r.lower for r in results.values()]
                    + ([] if len(results) == len(searches)
                       else [float(np.minimum(wpos, wneg).sum())]))
        planes = best.planes + best.planes[-1:] * (self.n_hyperplanes - len(best.planes))
        self.hyperplanes_ = np.array([np.r_[data.frame.to_original(a, b)] for a, b in planes])
        self.training_errors_ = self._realized_errors(data, best.value)
        self.n_candidates_ = sum(r.n_evaluated for r in results.values())
        self.lower_bound_ = lower
        self.is_optimal_ = bool(self.training_errors_ <= self.lower_bound_)
        self.stop_reason_ = next((r.stop_reason for r in results.values() if r.stop_reason),
                                 None)
        if not self.is_optimal_:
            why = "" if self.stop_reason_ is None else f", stopped early ({self.stop_reason_})"
            warnings.warn(
                f"DeepICEMaxoutClassifier ({self.method_}{why}) returns a network with "
                f"{self.training_errors_:g} errors; optimality is not proven (lower bound "
                f"{self.lower_bound_:g}).",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _choose_method(self, n: int, dim: int, K: int, n_jobs: int) -> str:
        """``"exact"`` or ``"coreset"``; refuses an exact search it cannot finish or hold."""
        planes = n_combinations(n, dim) if dim else 1
        if self.max_candidates is not None:
            planes = min(planes, self.max_candidates)
        if self.method == "coreset":
            return "coreset"
        if K == 1:  # the ICE search (its own size checks) on the linear problem
            return ("exact" if self.method == "exact" or planes <= _MAX_EXACT_LINEAR
                    else "coreset")
        subsets = 2 * planes + 2  # candidate half-spaces: about two per hyperplane
        # non-decreasing K-tuples of candidates, C(subsets + K - 1, K), in log10
        log_tuples = (math.lgamma(subsets + K) - math.lgamma(K + 1)
                      - math.lgamma(subsets)) / math.log(10)
        if self.method == "auto":
            small = planes <= _MAX_EXACT_PLANES and log_tuples <= math.log10(_MAX_EXACT_TUPLES)
            return "exact" if small else "coreset"
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
                                   res.stop_reason)
        if K == 1:
            # one half-space: the exact linear problem, solved by the ICE search
            res = solve_min01(Z, want_w, other_w, backend=backend,
                              max_candidates=self.max_candidates, time_limit=time_limit,
                              n_jobs=n_jobs, verbose=self.verbose)
            sets, n_eval = [res.positive], res.n_candidates
        else:
            res = exact_union(Z, want_w, other_w, K, max_planes=self.max_candidates,
                              backend=backend, upper_bound=upper_bound,
                              time_limit=time_limit, n_jobs=n_jobs, verbose=self.verbose)
            sets, n_eval = res.sets, res.n_evaluated
        planes, value, exact = realize_union(Z, sets, want_w, other_w)
        stop_reason = res.stop_reason
        if not exact:
            stop_reason = stop_reason or "margin below float64 resolution"
        # a complete search proves that no network errs less than its value (or than the
        # bound it was asked to beat); otherwise only conflicting duplicates bound it
        lower = (min(res.value, upper_bound) if res.complete
                 else float(np.minimum(want_w, other_w).sum()))
        return _PolarityResult(value, planes, lower, n_eval, stop_reason)

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
