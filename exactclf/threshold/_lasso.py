"""ThresholdNetLasso: threshold-activation networks trained to the global optimum (a Lasso)."""

from __future__ import annotations

import base64
import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .._base import with_class_weight
from .._certificate import (
    LASSO_OBJECTIVES,
    Certificate,
    StopReason,
    Witness,
    certificate_view,
    class_weighted,
    data_fingerprint,
)
from .._fit_guard import guarded_fit
from .._verification._lasso import feasible_for_every_pattern
from .._verification._tolerances import LASSO_RTOL
from .._warnings import warn
from ._arrangements import Arrangement, unique_columns
from ._closed_form import closed_form_fit, complete_dual_norm, layer_cake
from ._losses import LOSSES
from ._path import solve_problem
from ._problem import LassoProblem, build_problem
from ._reconstruction import FirstLayer, build_network
from ._solvers import GAP_FLOOR_RTOL, duality_gap, resolve_solver

__all__ = ["ThresholdNetLasso", "ThresholdNetLassoRegressor"]


class _ThresholdNetBase(BaseEstimator):
    """Shared fit / forward pass of the classifier and the regressor."""

    _common_constraints: dict = {
        "arrangements": [StrOptions({"auto", "exact", "sample"})],
        "n_arrangements": [Interval(Integral, 1, None, closed="left")],
        "reconstruction": [StrOptions({"svm", "pi"})],
        "hidden_layer_sizes": [tuple, list, None],
        "solver": [StrOptions({"auto", "closed_form", "ipm", "lars", "skglm", "sklearn",
                                "highs"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }
    _single_target = False

    objective_ = certificate_view(
        "value", "Training objective of the returned network (``certificate_.value``).")
    is_optimal_ = certificate_view(
        "is_optimal", "Whether the network is proven optimal (``certificate_.is_optimal``).")
    fit_time_ = certificate_view("fit_time", "Seconds spent in ``fit``.")

    @property
    def dual_gap_(self) -> float:
        """Duality gap of the returned network (``certificate_.value - certificate_.bound``),
        in the objective's units."""
        return self.certificate_.value - self.certificate_.bound

    # -- fit -------------------------------------------------------------------------------
    def _fit_targets(self, X, Y, sw, loss, fingerprint):
        """Fit on validated ``X`` (n x d), targets ``Y`` (n x K), weights ``sw``;
        ``fingerprint``: the data's, for the certificate."""
        t0 = time.perf_counter()
        problem = self._problem(X, Y, sw, loss, fingerprint)
        if problem.mode == "closed_form":
            self._fit_closed_form(problem, self.beta, t0)
        else:
            self._fit_problem(problem, self.beta, problem.first_layer(self.reconstruction),
                              t0=t0)
        return self

    def _problem(self, X, Y, sw, loss, fingerprint) -> LassoProblem:
        """The Lasso of the training data (its dictionary does not depend on ``beta``), with
        the data's ``fingerprint``."""
        sizes = () if self.hidden_layer_sizes is None else tuple(self.hidden_layer_sizes)
        if not all(isinstance(m, Integral) and m >= 1 for m in sizes):
            raise ValueError(f"hidden_layer_sizes must hold positive integers, got "
                             f"{self.hidden_layer_sizes!r}.")
        if self.solver != "closed_form":
            resolve_solver(self.solver, loss, True)  # impossible loss/solver pairs raise
        problem = build_problem(X, Y, sw, loss, arrangements=self.arrangements,
                                n_arrangements=self.n_arrangements, hidden_layer_sizes=sizes,
                                rng=check_random_state(self.random_state), solver=self.solver,
                                name=type(self).__name__)
        problem.fingerprint = fingerprint
        return problem

    def _fit_problem(self, problem: LassoProblem, beta: float, first: FirstLayer, w0=None,
                     t0=None):
        """Solve the Lasso of ``problem`` at ``beta`` (warm started from ``w0``, dictionary x
        outputs, where the solver can use it), build the network from ``first`` and certify
        it. Returns the solver's weights (dictionary x outputs)."""
        t0 = time.perf_counter() if t0 is None else t0
        D, c = problem.D, problem.c
        solver = self.solver if self.solver != "closed_form" else "auto"
        solver = resolve_solver(solver, problem.loss, bool(np.all(c == c[0])), D.shape)
        if self.verbose:
            print(f"{type(self).__name__}: {problem.mode} arrangement, {D.shape[1]} patterns "
                  f"of {len(problem.Z)} unique points (dimension {problem.Z.shape[1]}); "
                  f"solver {solver}, beta={beta:g}")
        W, objective, lower, n_iter, info = solve_problem(problem, beta, solver, self.tol,
                                                          self.max_iter, w0)
        self.arrangements_ = problem.mode
        self.solver_ = solver
        self.n_patterns_ = D.shape[1]
        self.n_patterns_total_ = problem.n_patterns_total
        self.n_iter_ = n_iter
        repaired = self._set_network(first, problem.layers, W)
        self._finish(problem, beta, lower, problem.sample_dual(info.dual),
                     None if repaired else objective, t0, info.budget_spent)
        return W

    def _fit_closed_form(self, problem: LassoProblem, beta: float, t0=None):
        t0 = time.perf_counter() if t0 is None else t0
        X, Y, sw, inverse = problem.X, problem.Y, problem.sw, problem.inverse
        scaled = beta / sw[0]
        cols, blocks = [], []
        for k in range(Y.shape[1]):
            P, w = layer_cake(closed_form_fit(Y[:, k], scaled))
            cols.append(P)
            blocks.append((k, w))
        allP = np.hstack([np.ones((len(X), 1), dtype=bool)] + cols)
        first = unique_columns(allP)
        patterns = allP[:, first]
        W = np.zeros((patterns.shape[1], Y.shape[1]))
        for (k, w), P in zip(blocks, cols, strict=True):
            for j in range(P.shape[1]):
                col = int(np.flatnonzero((patterns == P[:, [j]]).all(axis=0))[0])
                W[col, k] += w[j]
        D = patterns.astype(np.float64)
        objective, lower, dual = 0.0, np.zeros(Y.shape[1]), np.zeros(Y.shape)
        for k in range(Y.shape[1]):
            # the residual is a dual point; its feasibility is checked against every 0/1
            # pattern (the dictionary is complete), not only against the ones used
            p, g, dual[:, k] = duality_gap(D, Y[:, k], W[:, k], beta, "squared", sw,
                                           dual_norm=complete_dual_norm, return_dual=True)
            objective += p
            lower[k] = p - g
        self.arrangements_ = "closed_form"
        self.solver_ = "closed_form"
        self.n_patterns_ = 2 ** len(X) - 1
        self.n_patterns_total_ = problem.n_patterns_total
        self.n_iter_ = 0
        # patterns are indexed like X; the network is built on the unique points
        arr = Arrangement(patterns[np.argsort(inverse)], None, True)
        first_layer = FirstLayer(X, problem.Z, problem.frame, arr, inverse,
                                 self.reconstruction)
        repaired = self._set_network(first_layer, (), W)
        self._finish(problem, beta, lower, problem.sample_dual(dual),
                     None if repaired else objective, t0)

    def _set_network(self, first, layers, W):
        """Reconstruct the network that ``W`` selects; returns the number of first-layer
        neurons whose pattern float64 could not realize (each kept with the separator's best
        plane; the network then differs from the solver's, and only the certificate
        recomputed on it holds)."""
        net = build_network(first, list(layers), W)
        self.hidden_coefs_ = net.coefs
        self.hidden_intercepts_ = net.intercepts
        self.coef_ = net.W.T.copy()
        self.n_neurons_ = net.W.shape[0]
        if net.n_repaired:
            warn(
                f"{type(self).__name__}: {net.n_repaired} hidden neuron(s) of the optimal "
                "network separate training points by a margin below float64's resolution; "
                "each is replaced by the nearest plane float64 represents, so the returned "
                "network differs from the optimal one on some training points (see "
                "is_optimal_ and dual_gap_, recomputed on the returned network).",
                ConvergenceWarning,
            )
        return net.n_repaired

    def _finish(self, problem, beta, lower, dual, expected, t0, budget_spent=False):
        """Certify the returned network: its objective recomputed from ``predict``'s
        arithmetic on the training data, against the dual lower bounds ``lower`` (one per
        output) of the dual point ``dual`` (samples x outputs, see
        ``LassoProblem.sample_dual``). ``expected``: the solver's objective, which the network must
        reproduce (None when neurons were repaired); ``budget_spent``: a solver call used
        all of ``max_iter``. Sets ``certificate_``."""
        X, Y, sw, loss = problem.X, problem.Y, problem.sw, problem.loss
        F = self._hidden(X) @ self.coef_.T
        realized = np.zeros(Y.shape[1])
        loss0 = np.zeros(Y.shape[1])
        for k in range(Y.shape[1]):
            realized[k] = LOSSES[loss].value(F[:, k], Y[:, k], sw).sum()
            loss0[k] = LOSSES[loss].value(np.zeros(len(sw)), Y[:, k], sw).sum()
        realized += beta * np.abs(self.coef_).sum(axis=1)
        objective = float(realized.sum())
        # atol in the objective's units (those of the weights): the zero network's loss
        if expected is not None and not np.isclose(objective, expected, rtol=1e-9,
                                                   atol=1e-9 * float(loss0.sum())):
            raise RuntimeError(
                f"internal error: the fitted network's objective {objective} differs from the "
                f"solver's {expected}; please report this data"
            )
        gaps = np.maximum(realized - lower, 0.0)
        gap = float(gaps.sum())
        met = bool(np.all(gaps <= self.tol * loss0))
        complete = problem.mode == "closed_form" or (problem.mode == "exact"
                                                     and not problem.layers)
        # the float64 enumeration puts points within COPLANAR_RTOL of a plane on it: on a
        # decimal grid, points collinear in decimals but not in binary are split by patterns
        # that it merged, so the dual point is checked against the exact enumeration (beyond
        # its budget the float64 one stands); with points too thin for float64 (see
        # AffineFrame.certifiable) or such a pattern, the bound does not cover every network
        ties_exact = problem.mode != "exact" or feasible_for_every_pattern(
            X, dual[problem.keep], beta) is not False
        every = complete and problem.frame.certifiable and ties_exact
        stop = None
        if not met:
            why, stop = self._gap_cause(gaps, loss0, expected is None, budget_spent)
            warn(
                f"{type(self).__name__}: the returned network's duality gap {gap:.3g}"
                f" (objective {objective:.6g}) is above tol={self.tol:g} relative to the "
                f"zero network's loss {loss0.sum():.6g}: not certified optimal; {why}.",
                ConvergenceWarning,
            )
        elif not complete:
            stop = StopReason.SAMPLED_PATTERNS
        elif not ties_exact:
            stop = StopReason.NEAR_TIES
        elif not every:
            stop = StopReason.THIN_POINTS
        if self._single_target:
            self.coef_ = self.coef_[0]
        self.certificate_ = Certificate(
            type(self).__name__, self._model_class(problem, beta, every),
            class_weighted(LASSO_OBJECTIVES[loss], getattr(self, "class_weight", None)),
            value=objective, bound=objective - gap,
            bound_method=("Lasso duality: the dual objective at a dual point feasible for "
                          + ("every arrangement pattern" if every
                             else "every pattern of the dictionary")),
            is_optimal=every and met and gap <= LASSO_RTOL * float(loss0.sum()),
            stop_reason=stop, fit_time=time.perf_counter() - t0,
            fingerprint=problem.fingerprint, n_samples=len(problem.keep),
            # is_optimal: the gap within LASSO_RTOL of the zero network's loss (and every
            # output's within tol of its own); as a fraction of the objective, at most this
            rtol=float(LASSO_RTOL * loss0.sum() / objective) if objective > 0 else 0.0,
            witness=self._witness(problem, beta, dual, every),
        )

    def _gap_cause(self, gaps, loss0, repaired, budget_spent):
        """Why the gap stayed above ``tol``, as text and as a stop reason."""
        if repaired:
            return ("hidden neurons that float64 cannot realize were replaced",
                    StopReason.UNREALIZABLE_MARGIN)
        if np.all(gaps <= GAP_FLOOR_RTOL * loss0):
            return (f"tol={self.tol:g} is below the floating-point floor of the gap (about "
                    f"{GAP_FLOOR_RTOL:.0e} of the zero network's loss); use a larger tol",
                    StopReason.NUMERICAL)
        if self.solver_ == "highs":
            return ("HiGHS solves the hinge-loss linear program to its feasibility "
                    "tolerances only, and the dual point of its solution certifies no "
                    "smaller gap; use a larger tol", StopReason.NUMERICAL)
        if budget_spent:
            return (f"a solver call used all max_iter={self.max_iter} iterations; increase "
                    "max_iter", StopReason.MAX_ITER)
        return (f"the gap of solver {self.solver_!r} and of its fallbacks stopped improving "
                "within their iteration budget (the accuracy they reach on this problem); "
                "use a larger tol", StopReason.BOUNDS_STALLED)

    def _model_class(self, problem, beta, every) -> str:
        """The networks the certificate's bound ranges over."""
        n_pat = self.n_patterns_
        if problem.layers:
            return (f"threshold networks of {len(problem.layers) + 1} hidden layers, all but "
                    f"the last the fitted random ones, with weight decay beta={beta:g} on the "
                    f"output weights (the Lasso over the {n_pat} sampled last-layer patterns "
                    "only)")
        net = f"two-layer threshold networks with weight decay beta={beta:g}"
        if every:
            return f"{net} (the Lasso over all {n_pat} arrangement patterns of the inputs)"
        if problem.mode == "exact":
            return (f"{net} (the Lasso over the {n_pat} enumerated arrangement patterns only: "
                    "the inputs are too thin for float64 to prove that they are all)")
        return f"{net} (the Lasso over the {n_pat} sampled arrangement patterns only)"

    @staticmethod
    def _witness(problem, beta, dual, every) -> Witness:
        """The ``"lasso_dual"`` witness (checked by ``exactclf/_verification/_lasso.py``)."""
        data = {"loss": problem.loss, "beta": float(beta),
                "dictionary": "all" if every else "listed", "theta": dual.tolist()}
        if problem.mode != "closed_form":  # the closed form's dictionary is every subset
            P = problem.sample_patterns()
            data["patterns"] = {
                "shape": list(P.shape),
                "packbits": base64.b64encode(np.packbits(P.T, axis=1).tobytes()).decode(),
            }
        note = ("theta: a dual point of the Lasso, per sample and output (0 where the weight "
                "is 0), feasible (|d^T theta| <= beta) for every column d of the dictionary; "
                "its dual objective is the bound. dictionary 'all': every arrangement "
                "pattern of the inputs; 'listed': only the columns in patterns (samples of "
                "positive weight x patterns, numpy.packbits of its transpose, base64)")
        return Witness("lasso_dual", note, data)

    # -- forward pass ----------------------------------------------------------------------
    def _hidden(self, X):
        H = np.asarray(X, dtype=np.float64)
        for C, c in zip(self.hidden_coefs_, self.hidden_intercepts_, strict=True):
            H = (H @ C + c >= 0).astype(np.float64)
        return H

    def hidden_activations(self, X):
        """Activations (0/1) of the last hidden layer.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, `n_neurons_`)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._hidden(X)


_DOC_BETA = """
    beta : float, default=1e-3
        Weight-decay strength; in the convex program the ``l1`` penalty on the output
        weights (larger: fewer neurons)."""

_DOC_PARAMS = """
    arrangements : {"auto", "exact", "sample"}, default="auto"
        Which hyperplane-arrangement patterns form the dictionary. ``"exact"``: all of them,
        enumerated by the degenerate-safe dichotomy enumerator (refused with an error when
        Cover's count says there are far too many). ``"sample"``: those of
        ``n_arrangements`` Gaussian random hyperplanes in standardized coordinates,
        deduplicated. ``"auto"``: the closed form when the arrangement is complete, else
        ``"exact"`` when Cover's count is at most ``n_arrangements``, else ``"sample"``.
    n_arrangements : int, default=1000
        Number of random hyperplanes sampled (per layer for deep networks); the budget
        ``"auto"`` compares Cover's count with.
    reconstruction : {"svm", "pi"}, default="svm"
        Hidden weights of a selected pattern: ``"svm"``, the hard-margin (maximum margin)
        hyperplane of the pattern in standardized coordinates; ``"pi"``, the pseudo-inverse
        solution of ``[X, 1] g = pattern`` with threshold 0.5 where it interpolates the
        pattern (complete arrangements), else the sampled hyperplane that produced it (or
        the max-margin one). Either way the network reproduces every pattern on the
        training data.
    hidden_layer_sizes : tuple of int, default=None
        None: one hidden layer (the exact convex equivalent). ``(m_1, ..., m_L)``: L more
        threshold layers; every neuron of layer ``l + 1`` reads ``m_l`` random neurons of
        layer ``l``, with random weights; the Lasso selects the last layer's neurons (a
        sampled dictionary: optimal for it, not certified over all deep networks).
    solver : {"auto", "closed_form", "ipm", "lars", "skglm", "sklearn", "highs"}, \
default="auto"
        Lasso solver. ``"auto"``: squared loss, the closed form on complete arrangements,
        else ``"ipm"`` while its Newton matrix (``n_points`` squared) has at most ``2.5e7``
        entries, else ``"lars"``. ``"ipm"``: PIQP's dense interior-point method on the
        Lasso's dual QP (one variable per point; its primal QP where there are fewer than
        half as many patterns as points), unaffected by the degeneracy of arrangement
        designs (0/1 entries, tied correlations, a pattern plus its complement equal to the
        bias column), then the HiGHS simplex moves its solution to a vertex of the optimal
        face (at most ``rank`` neurons, same objective); the fastest measured on these
        designs, see ``benchmarks/threshold_solvers.py``. ``"lars"``: the exact LARS-Lasso
        homotopy, which may break down on degenerate designs. Either one that misses
        ``tol`` hands the problem to the other, then to coordinate descent (skglm where
        installed, else scikit-learn), warm started from a usable point. Logistic loss:
        ``"auto"`` is ``"skglm"`` (Anderson accelerated coordinate descent) when skglm is
        installed and the weights are equal, else ``"sklearn"`` (liblinear). Hinge loss:
        always a linear program on HiGHS (``"highs"``). ``"sklearn"`` for the squared loss
        is scikit-learn's coordinate descent.
    tol : float, default=1e-6
        Target duality gap relative to the loss of the zero network; the solver's own
        tolerance is tightened (warm started) up to three times to reach it. A ``tol``
        above 1e-4 can stop with a gap that ``is_optimal_`` does not call optimal.
    max_iter : int, default=1000
        Iteration budget of each solver call.
    random_state : int, RandomState instance or None, default=None
        Seeds the sampled hyperplanes.
    verbose : int, default=0
        ``>= 1`` prints the dictionary size and the solver."""

_DOC_ATTRS = """
    hidden_coefs_ : list of ndarray
        Weight matrix of each hidden layer (first: ``(n_features, m_1)``); a neuron fires
        (value 1) iff ``h @ coef + intercept >= 0``.
    hidden_intercepts_ : list of ndarray
        Biases of each hidden layer. The all-ones pattern, if used, is the neuron with zero
        weights and bias 1 (the output bias).
    certificate_ : Certificate
        What the fit proves (:class:`exactclf._certificate.Certificate`), re-checked by
        :func:`exactclf.verify`: ``value`` is ``objective_``, ``bound`` the dual objective
        ``objective_ - dual_gap_`` of its witness (kind ``"lasso_dual"``: a dual point per
        sample, feasible for every column of the dictionary), ``model_class`` says whether
        that dictionary is every arrangement pattern or a sample (``stop_reason``
        ``"sampled arrangement patterns"``), and ``is_optimal`` holds when the gap is
        within 1e-4 of the zero network's loss (whatever ``tol``); ``rtol`` is that over
        ``objective_``. ``objective_``, ``dual_gap_``, ``is_optimal_`` and ``fit_time_``
        are views of it.
    objective_ : float
        Training objective ``loss(network(X)) + beta * |coef_|_1`` realized by the returned
        network (checked against the solver's value).
    dual_gap_ : float
        Duality gap of the final Lasso (summed over outputs), computed from a feasible dual
        point: ``objective_ - dual_gap_`` is a lower bound on the optimum over the
        dictionary; on a complete dictionary (exact or closed form), over all networks.
    is_optimal_ : bool
        The dictionary holds every pattern and the gap of every output is at most ``tol``
        times its zero network's loss.
    arrangements_ : str
        ``"closed_form"``, ``"exact"`` or ``"sample"``.
    solver_ : str
    n_patterns_ : int
        Size of the dictionary (``2**n - 1`` for the closed form).
    n_patterns_total_ : int
        Cover's count of the patterns of the (unique) training points (an upper bound in
        degenerate position).
    n_neurons_ : int
        Neurons of the last hidden layer with a non-zero output weight.
    n_iter_ : int
        Solver iterations (summed).
    fit_time_ : float
        Seconds spent in ``fit``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has feature names that are all strings."""


class ThresholdNetLasso(ClassifierMixin, _ThresholdNetBase):
    __doc__ = f"""Threshold-activation network classifier trained to the global optimum.

    A two-layer network ``f(x) = sum_j w_j 1{{a_j . x + b_j >= 0}}`` with weight decay cannot
    be trained by gradients (the threshold's derivative is zero almost everywhere), but on
    the training points every hidden neuron is one of the finitely many hyperplane-
    arrangement patterns ``d = 1{{X a + b >= 0}}``. Training is therefore the convex program::

        min_w  loss(D w, y) + beta * |w|_1,

    ``D`` holding all patterns as columns (the all-ones pattern is the bias); its non-zero
    ``w_j`` are the neurons. For ``loss="squared"`` and labels ``y`` in {{-1, +1}} the
    objective is ``1/2 |D w - y|^2 + beta |w|_1``. Multiclass: one output (one Lasso) per
    class against the rest, sharing the arrangement. When the training points are affinely
    independent (e.g. ``n <= d + 1`` in general position) every pattern is realizable and the
    problem has a closed form. A duality gap computed from a feasible dual point certifies
    the solution (``dual_gap_``).

    Cost: exact enumeration has ``2 sum_{{k<=r}} C(n - 1, k)`` patterns (r = rank of the
    centered data): practical for small rank; otherwise a sample of patterns is used, and
    the result is optimal for that dictionary.

    Parameters
    ----------
    {_DOC_BETA}
    {_DOC_PARAMS}
    loss : {{"squared", "logistic", "hinge"}}, default="squared"
        Output loss. ``"hinge"`` (``max(0, 1 - y f)``) is solved exactly as a linear program.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, as in scikit-learn: each sample's loss is weighted by its
        sample weight times ``class_weight`` of its class. The certificate's ``objective``
        says so.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_outputs, `n_neurons_`)
        Output weights ``w`` (one row for two classes, one per class otherwise).
    {_DOC_ATTRS}

    See Also
    --------
    sklearn.neural_network.MLPClassifier : gradient-trained networks (smooth activations).

    References
    ----------
    T. Ergen, H. I. Gulluk, J. Lacotte and M. Pilanci, "Globally optimal training of neural
    networks with threshold activation functions", ICLR 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf.threshold import ThresholdNetLasso
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.4]])
    >>> y = np.array([0, 1, 1, 0, 1])          # XOR-like: no single hyperplane fits it
    >>> clf = ThresholdNetLasso(beta=0.01, arrangements="exact").fit(X, y)
    >>> clf.predict(X)
    array([0, 1, 1, 0, 1])
    >>> clf.is_optimal_, clf.dual_gap_ < 1e-6 * 5
    (True, True)
    >>> bool(np.isclose(0.5 * np.sum((clf.decision_function(X) - (2 * y - 1)) ** 2)
    ...                 + 0.01 * np.abs(clf.coef_).sum(), clf.objective_))
    True
    """

    _parameter_constraints: dict = {
        **_ThresholdNetBase._common_constraints,
        "beta": [Interval(Real, 0, None, closed="neither")],
        "loss": [StrOptions({"squared", "logistic", "hinge"})],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(
        self,
        beta=1e-3,
        *,
        arrangements="auto",
        n_arrangements=1000,
        loss="squared",
        reconstruction="svm",
        hidden_layer_sizes=None,
        solver="auto",
        tol=1e-6,
        max_iter=1000,
        random_state=None,
        verbose=0,
        class_weight=None,
    ):
        self.class_weight = class_weight
        self.beta = beta
        self.arrangements = arrangements
        self.n_arrangements = n_arrangements
        self.loss = loss
        self.reconstruction = reconstruction
        self.hidden_layer_sizes = hidden_layer_sizes
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    @guarded_fit
    def fit(self, X, y, sample_weight=None):
        """Fit the globally optimal network for the arrangement dictionary.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative per-sample weights of the loss.

        Returns
        -------
        self : ThresholdNetLasso
        """
        Xv, Y, sw = self._validated(X, y, sample_weight)
        return self._fit_targets(Xv, Y, sw, self.loss, data_fingerprint(Xv, y, sample_weight))

    def _validated(self, X, y, sample_weight):
        """``(X, Y, sw)``: validated data, targets in {-1, +1} (one column per class when
        there are more than two); sets ``classes_``."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        classes, yi = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; "
                             f"the data has 1 class: {classes[0]}.")
        sw = with_class_weight(_check_sample_weight(sample_weight, X, ensure_non_negative=True),
                               getattr(self, "class_weight", None), y)
        # set only once the data is accepted: a refused refit leaves no classes_ behind
        self.classes_ = classes
        if len(self.classes_) == 2:
            Y = (2.0 * yi - 1.0)[:, None]
        else:
            Y = np.where(yi[:, None] == np.arange(len(self.classes_)), 1.0, -1.0)
        return X, Y, sw

    def decision_function(self, X):
        """Network output ``hidden_activations(X) @ coef_.T``: positive for ``classes_[1]`` (two
        classes), one column per class otherwise.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        F = self.hidden_activations(X) @ self.coef_.T
        return F[:, 0] if F.shape[1] == 1 else F

    def predict(self, X):
        """Predicted class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        F = self.decision_function(X)
        if F.ndim == 1:
            return self.classes_[(F > 0).astype(int)]
        return self.classes_[np.argmax(F, axis=1)]


class ThresholdNetLassoRegressor(RegressorMixin, _ThresholdNetBase):
    __doc__ = f"""Threshold-activation network regressor trained to the global optimum.

    The regression counterpart of :class:`ThresholdNetLasso`: minimizes
    ``1/2 |D w - y|^2 + beta |w|_1`` over output weights ``w`` on the hyperplane-arrangement
    dictionary ``D`` (squared loss; one Lasso per target column).

    Parameters
    ----------
    {_DOC_BETA}
    {_DOC_PARAMS}

    Attributes
    ----------
    coef_ : ndarray of shape (`n_neurons_`,) or (n_targets, `n_neurons_`)
        Output weights.
    {_DOC_ATTRS}

    See Also
    --------
    ThresholdNetLasso : the classifier.

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf.threshold import ThresholdNetLassoRegressor
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([0.0, 1.0, 1.0, 3.0])
    >>> reg = ThresholdNetLassoRegressor(beta=0.1, arrangements="exact").fit(X, y)
    >>> np.round(reg.predict(X), 3)
    array([0. , 1. , 1. , 2.9])
    >>> reg.is_optimal_, reg.n_neurons_
    (True, 4)
    """

    _parameter_constraints: dict = {
        **_ThresholdNetBase._common_constraints,
        "beta": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        beta=1e-3,
        *,
        arrangements="auto",
        n_arrangements=1000,
        reconstruction="svm",
        hidden_layer_sizes=None,
        solver="auto",
        tol=1e-6,
        max_iter=1000,
        random_state=None,
        verbose=0,
    ):
        self.beta = beta
        self.arrangements = arrangements
        self.n_arrangements = n_arrangements
        self.reconstruction = reconstruction
        self.hidden_layer_sizes = hidden_layer_sizes
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    @guarded_fit
    def fit(self, X, y, sample_weight=None):
        """Fit the globally optimal network for the arrangement dictionary.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative per-sample weights of the loss.

        Returns
        -------
        self : ThresholdNetLassoRegressor
        """
        Xv, Y, sw = self._validated(X, y, sample_weight)
        return self._fit_targets(Xv, Y, sw, "squared", data_fingerprint(Xv, y, sample_weight))

    def _validated(self, X, y, sample_weight):
        """``(X, Y, sw)``: validated data and targets as columns."""
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True)
        sw = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        if not np.any(sw > 0):
            raise ValueError(f"{type(self).__name__}: every sample weight is zero.")
        self._single_target = y.ndim == 1
        Y = y[:, None] if y.ndim == 1 else y
        return X, Y.astype(np.float64), sw

    def predict(self, X):
        """Network output.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        H = self.hidden_activations(X)
        return H @ self.coef_ if self.coef_.ndim == 1 else H @ self.coef_.T
