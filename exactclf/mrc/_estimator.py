"""The public estimator :class:`MRCCCG`: validation, feature map, scaling and scikit-learn
plumbing around the generation of :mod:`._ccg`."""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .._backend import resolve_device
from .._certificate import (
    MRC_OBJECTIVES,
    Certificate,
    StopReason,
    Witness,
    certificate_view,
    data_fingerprint,
    relative_gap,
)
from .._fit_guard import guarded_fit
from .._geometry import check_spread
from .._verification._tolerances import MRC_RTOL
from .._warnings import warn
from ._bounds import DualPoint, class_scores_matrix, dual_point, pinned_signs_agree
from ._ccg import mrc_ccg
from ._log import mrc_log_ccg
from ._phi import PHI_NAMES, fit_feature_map
from ._rule_bounds import rule_loss_bound
from ._statistics import mrc_statistics

__all__ = ["MRCCCG"]

#: what the certificate's proof ranges over, and what its value measures, per loss
_MODEL_CLASS = {
    "0-1": "0-1 minimax risk classifiers over the feature map phi_ (the MRC LP over the "
           "training inputs)",
    "log": "log-loss minimax risk classifiers over the feature map phi_ (the MRC convex "
           "program over the training inputs)",
}
#: the final dual LP's time: this share of the generation's, at least these seconds
_DUAL_SHARE, _DUAL_MIN_SECONDS = 0.5, 1.0
#: the stop reason of a generation that converged to its tolerances (eps1, tol) with a
#: certificate whose gap is still above MRC_RTOL: the proof stopped short of its tolerance
_GAP_STOP = StopReason.OPEN_GAP


class MRCCCG(ClassifierMixin, BaseEstimator):
    """0-1 minimax risk classifier, learned by constraint and column generation.

    The minimax risk classifier (MRC) minimizes the worst-case 0-1 risk over the distributions
    whose feature expectations lie within ``lambda`` of the training mean ``tau`` of
    ``Phi(x, y) = e_y (x) psi(x)``; the minimum ``R*`` is an LP with one row per training
    sample and nonempty label subset. This estimator solves that LP exactly (up to ``eps1``)
    without writing it down: one persistent LP (HiGHS, or Gurobi) receives the most violated
    row of the worst samples (found for *all* samples each iteration, never a subsample) and,
    for many features, the most violated feature columns, and is re-solved warm. At the end,
    the worst-case error ``R(mu)`` of the returned classifier is evaluated exactly over all
    samples and all label subsets and reported as ``upper_``; ``lower_`` is a lower bound on
    the optimum ``R*`` from the LP's duals priced over every feature, so
    ``R* in [lower_, upper_]``.

    Guarantee: ``upper_`` bounds the worst-case expected 0-1 loss of the *randomized* rule
    ``predict_proba`` over the distributions of the uncertainty set that are supported on the
    training inputs (at other inputs the bound does not follow); the empirical distribution is
    one, so the expected training 0-1 error of ``predict_proba`` is at most ``upper_``. The
    deterministic rule ``predict`` (a most probable class) errs only where the true class has
    probability at most 1/2, so its error under those distributions is at most ``2 upper_``;
    ``upper_`` itself is not a bound on it.

    Parameters
    ----------
    loss : {"0-1", "log"}, default="0-1"
        ``"0-1"``: the LP above. ``"log"``: the MRC of the log loss, whose rule is the softmax
        of the scores and whose worst-case term is a log-sum-exp over the labels; the
        restricted convex programs of its constraint generation are solved by Clarabel
        (``pip install clarabel``), with all features (no column generation; ``m_max``,
        ``lp_solver`` and ``device`` do not apply) and ``upper_``, ``lower_`` certified the
        same way (see the user guide).
    phi : {"linear", "fourier", "relu", "threshold"} or transformer, default="linear"
        Feature map ``psi`` (see :mod:`exactclf.mrc._phi`): the inputs; random Fourier
        features (Gaussian kernel); random ReLU features; per-feature threshold indicators;
        or any scikit-learn transformer (a clone is fitted on ``X``). The model does not
        change when a feature is scaled, but it does when one is shifted: a class's block of
        ``Phi(x, y)`` is ``psi(x)`` on that class and 0 elsewhere, so its standard deviation
        (hence ``lambda``) depends on where 0 is. Standardize the inputs (e.g.
        :class:`~sklearn.preprocessing.StandardScaler` in a pipeline) for a model that does
        not depend on the origin of their units.
    s : float, default=0.3
        Width of the uncertainty set: ``lambda = s * std(Phi(x_i, y_i)) / sqrt(n)``.
    fit_intercept : bool, default=True
        Prepend a constant 1 to ``psi(x)``.
    eps1 : float, default=1e-4
        Rows (sample, subset) violated by more than ``eps1`` are added; generation stops when
        none is, and ``upper_ - lower_ <= eps1`` up to the LP solver's tolerance. It sets how
        close the fit gets, not what optimal means: ``certificate_.is_optimal`` needs the
        relative gap ``(upper_ - lower_) / upper_`` within the fixed ``MRC_RTOL = 1e-3``
        (:mod:`exactclf._verification._tolerances`), whatever ``eps1`` and ``tol``; a converged
        fit with a larger gap reports it, with ``is_optimal`` False, ``stop_reason_``
        ``StopReason.OPEN_GAP`` and a :class:`~sklearn.exceptions.ConvergenceWarning`. The
        CCG paper's 1e-2 stops early with ``upper_`` up to that much above ``R*`` for little
        saving in time; ``eps1 -> 0`` gives ``R*`` itself.
    eps2 : float, default=1e-5
        Features whose dual constraint is violated by more than ``eps2`` are added. Features
        violated by less still lower the iterate's bound (``lower_history_``: it prices every
        feature); when that leaves it more than ``eps1`` below ``upper_`` at the end, they are
        added as well.
    n_max : int, default=200
        Rows added per iteration at most (with the box step, 200 needs fewer simplex
        pivots in all than 400; ``benchmarks/results/mrc_ccg_history.txt``).
    m_max : int, default=400
        Column generation is used when there are more than ``m_max`` features
        ``n_classes * len(psi)``: it starts with ``m_max`` of them and adds at most ``m_max``
        per iteration.
    max_iter : int, default=500
        LP solves at most; a :class:`~sklearn.exceptions.ConvergenceWarning` says when this
        stops the generation early (``upper_`` is still certified).
    time_limit : float or None, default=None
        Seconds for the generation (the running LP solve is cut off too). When it runs out --
        or on Ctrl-C (``KeyboardInterrupt``) -- the fit returns the best point so far with
        its certified ``upper_``, the best ``lower_`` so far, and a
        :class:`~sklearn.exceptions.ConvergenceWarning` (``stop_reason_`` says why). After
        Ctrl-C the final dual bound is priced for at most a second (otherwise for up to half
        the fit's time again, within ``time_limit``).
    one_hot : bool, default=True
        ``Phi(x, y) = e_y (x) psi(x)``. ``False`` with two classes: the compact
        ``Phi(x, y) = sigma_y psi(x)`` with ``sigma = (-1, +1)`` for ``classes_[0]``,
        ``classes_[1]`` (MRCpy's default binary features: half the parameters, and a
        different, usually larger, ``R*``). With more classes there is no compact form and
        ``Phi`` is one-hot whatever this says.
    lp_solver : {"highs", "gurobi"}, default="highs"
        ``"gurobi"`` needs ``pip install exactclf[gurobi]``; when its licence refuses the
        model (the free size-limited one stops at 2000 rows or columns), the fit warns and
        continues with HiGHS.
    tol : float, default=1e-6
        Primal and dual feasibility tolerance of the LP solver.
    n_components : int, default=300
        Random features of ``"fourier"`` / ``"relu"``; most thresholds of ``"threshold"``.
    gamma : {"scale", "auto"} or float, default="scale"
        Scale of the random features: ``w ~ N(0, 2 gamma I)``; ``"scale"`` is
        ``1 / (n_features * X.var())``, ``"auto"`` is ``1 / n_features``.
    device : {"auto", "cpu", "gpu"}, default="auto"
        Where the scores and most violated subsets of all samples are computed each iteration
        (``"gpu"``: CuPy, extra ``exactclf[gpu]``); the LP always runs on the CPU, and
        ``"auto"`` keeps the CPU: the LP dominates, and the GPU has not won a measured fit.
    random_state : int, RandomState instance or None, default=None
        Seed of the random features.
    verbose : int, default=0
        ``>= 1`` prints one line per iteration; ``>= 2`` also the LP solver's log.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has feature names that are all strings.
    mu_ : ndarray of shape (q * `n_phi_features_`,)
        MRC parameters, in the layout of ``Phi``: ``mu_[k * n_phi_features_ + l]``, ``q``
        the number of classes (one-hot) or 1 (``one_hot=False`` with two classes).
    nu_ : float
        ``nu(mu_)``, evaluated over all training samples and label subsets.
    tau_, lambda_ : ndarray of shape (q * `n_phi_features_`,)
        Mean and uncertainty width of the features.
    certificate_ : exactclf.Certificate
        What the fit proves: ``value`` is ``upper_``, ``bound`` is ``lower_``, and its witness
        (kind ``"mrc_dual"``: ``mu_``, ``nu_`` and the dual point) lets
        :func:`exactclf.verify` re-derive both from the data. ``is_optimal`` when the
        generation converged with ``upper_ - lower_`` within the relative ``rtol = MRC_RTOL``
        (1e-3, :mod:`exactclf._verification._tolerances`) of ``upper_``, whatever ``eps1`` and
        ``tol``.
    upper_ : float
        ``R(mu_)``, evaluated over all training samples and label subsets: ``R*`` (the minimax
        risk) is at most this, and so is the expected 0-1 loss of the randomized rule
        ``predict_proba`` under every distribution of the uncertainty set supported on the
        training inputs (``predict``: at most twice this).
    lower_ : float
        Lower bound on ``R*``, proven by the dual point of ``certificate_``: weights on rows
        (sample, label subset) and on the class-average rows, optimized at the end of the fit
        by column generation on the dual LP over all rows and *every* feature (from the rows
        most violated at ``mu_``, to within ``(eps1 + tol) / 10`` of its optimum ``R*``) and
        made exactly feasible by mixing in the empirical distribution (see
        :func:`~exactclf.mrc._bounds.dual_point`). Valid however the fit stopped,
        ``max_iter`` included.
    gap_ : float
        ``(upper_ - lower_) / upper_``, the relative gap of ``certificate_`` (0 when
        ``is_optimal``); earlier versions had ``upper_ - lower_`` here.
    n_iter_ : int
        LP solves.
    converged_ : bool
        False when ``max_iter``, ``time_limit`` or an interrupt stopped the generation (True
        does not imply ``certificate_.is_optimal``: see ``gap_`` and ``stop_reason_``).
    R_history_ : list of float
        Certified ``R(mu)`` of every iterate.
    upper_history_ : list of float
        After every iteration, the certified ``R(mu)`` of the best point found so far (an
        iterate, or a better point on the segment between the best one and a new iterate):
        non-increasing, ending at ``upper_`` (when there was an iteration).
    lower_history_ : list of float
        Dual lower bound on ``R*`` of every iterate (from the restricted LP's row duals).
    n_constraints_ : int
        Constraints (sample, label subset) generated, plus one implied constraint per class
        (a constraint deleted as inactive and generated again counts twice); where the LP
        holds whole samples (eight classes or more, see the user guide), the samples added.
    n_lp_rows_ : int
        Constraints in the final LP (those not deleted as inactive); with whole samples,
        ``K + 1`` rows per sample and one per class.
    n_active_features_ : int
        Features in the final LP.
    label_embedding_ : ndarray of shape (2, 1) or None
        ``[[-1], [1]]`` for the compact binary features (``one_hot=False``), None for one-hot.
    selected_features_ : ndarray of shape (`n_active_features_`,)
        Indices (in the layout of ``mu_``) of the features in the final LP: with column
        generation (more than ``m_max`` features) the ones it selected; ``mu_`` is zero
        elsewhere.
    stop_reason_ : StopReason or None
        Why the proof did not complete: the generation stopped before converging
        (``"max_iter"``, ``"time_limit"``, ``"interrupted"``), or it converged to ``eps1`` and
        ``tol`` with a relative gap above ``MRC_RTOL`` (``OPEN_GAP``); None: it
        converged and ``certificate_.is_optimal``.
    n_phi_features_ : int
        Length of ``psi(x)``, intercept included.
    lp_solver_ : str
        The solver that produced the final LP solution (after any fallback; ``"clarabel"``
        for ``loss="log"``).
    phi_ : exactclf.mrc._phi.FeatureMap
        The fitted feature map.
    device_ : str
    fit_time_ : float

    See Also
    --------
    sklearn.linear_model.LogisticRegression : a surrogate-loss linear classifier without a
        worst-case guarantee.

    References
    ----------
    S. Mazuelas, A. Zanoni and A. Perez, "Minimax classification with 0-1 loss and performance
    guarantees", NeurIPS 2020. K. Bondugula, S. Mazuelas and A. Perez, "Efficient learning of
    minimax risk classifiers in high dimensions", UAI 2023. K. Bondugula, S. Mazuelas and
    A. Perez, "Efficient large-scale learning of minimax risk classifiers", ICDM 2025
    (arXiv:2511.17626).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from exactclf.mrc import MRCCCG
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = MRCCCG(eps1=1e-6).fit(X, y)
    >>> bool(clf.lower_ <= clf.upper_ <= clf.lower_ + 1e-6), clf.converged_
    (True, True)
    >>> expected_error = 1 - clf.predict_proba(X)[range(len(y)), y].mean()
    >>> bool(expected_error <= clf.upper_)
    True
    >>> clf.predict(X[:3])
    array([0, 0, 0])
    """

    _parameter_constraints: dict = {
        "loss": [StrOptions({"0-1", "log"})],
        "phi": [StrOptions(set(PHI_NAMES)), HasMethods(["fit", "transform"])],
        "s": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "eps1": [Interval(Real, 0, None, closed="left")],
        "eps2": [Interval(Real, 0, None, closed="left")],
        "n_max": [Interval(Integral, 1, None, closed="left")],
        "m_max": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "one_hot": ["boolean"],
        "lp_solver": [StrOptions({"highs", "gurobi"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "device": [StrOptions({"auto", "cpu", "gpu"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        loss="0-1",
        phi="linear",
        s=0.3,
        fit_intercept=True,
        eps1=1e-4,
        eps2=1e-5,
        n_max=200,
        m_max=400,
        max_iter=500,
        time_limit=None,
        one_hot=True,
        lp_solver="highs",
        tol=1e-6,
        n_components=300,
        gamma="scale",
        device="auto",
        random_state=None,
        verbose=0,
    ):
        self.loss = loss
        self.phi = phi
        self.s = s
        self.fit_intercept = fit_intercept
        self.eps1 = eps1
        self.eps2 = eps2
        self.n_max = n_max
        self.m_max = m_max
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.one_hot = one_hot
        self.lp_solver = lp_solver
        self.tol = tol
        self.n_components = n_components
        self.gamma = gamma
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    upper_ = certificate_view(
        "value", "``R(mu_)``, the certified worst-case risk of ``predict_proba`` "
        "(``certificate_.value``).")
    lower_ = certificate_view(
        "bound", "A certified lower bound on the minimax risk ``R*`` (``certificate_.bound``).")
    gap_ = certificate_view(
        "gap", "``(upper_ - lower_) / upper_``, 0 when optimal (``certificate_.gap``).")
    stop_reason_ = certificate_view(
        "stop_reason", "Why the proof did not complete; None when the fit is proven optimal.")
    fit_time_ = certificate_view("fit_time", "Seconds the fit took.")

    def _psi(self, X):
        P = self.phi_.transform(X)
        if self.fit_intercept:
            ones = np.ones((P.shape[0], 1))
            P = sp.hstack([ones, P], format="csr") if sp.issparse(P) else np.hstack([ones, P])
        return P

    @_fit_context(prefer_skip_nested_validation=True)
    @guarded_fit
    def fit(self, X, y, sample_weight=None):
        """Learn the minimax risk classifier.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A SciPy sparse ``X`` keeps ``psi(x)`` sparse for ``phi="linear"`` (and
            transformers with sparse output), so are the LP's constraint rows.
        y : array-like of shape (n_samples,)
            Two or more classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Nonnegative weights counting samples: ``tau`` and ``lambda`` are the weighted mean
            and standard deviation with ``n`` the total weight, so integer weights give the
            model of the data with each row repeated that many times. A sample of weight 0
            is left out entirely (its constraints and its class included).

        Returns
        -------
        self : MRCCCG
        """
        return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        t0 = time.perf_counter()
        y_given, weight_given = y, sample_weight
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        check_spread(X)
        fingerprint = data_fingerprint(X, y_given, weight_given)
        n_given = X.shape[0]
        kept = np.arange(n_given)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
            keep = sample_weight > 0
            X, y, sample_weight, kept = X[keep], y[keep], sample_weight[keep], kept[keep]
        classes, y_idx = np.unique(y, return_inverse=True)
        K = len(classes)
        if K < 2:
            raise ValueError(
                f"MRCCCG needs samples of at least 2 classes; the data has only 1 class: "
                f"{classes[0]!r}."
            )
        self.classes_ = classes
        # "auto": the GPU only for a feature matrix large enough to pay for it
        backend = resolve_device(self.device, "mrc", X.shape[0] * X.shape[1] * K)
        self.device_ = "gpu" if backend.name == "gpu" else "cpu"
        if self.loss == "log":
            _import_clarabel()
        elif self.lp_solver == "gurobi":
            from ._lp import _import_gurobipy

            _import_gurobipy()
        self.phi_ = fit_feature_map(self.phi, X, y_idx, n_components=self.n_components,
                                    gamma=self.gamma, random_state=self.random_state)
        Psi = self._psi(X)
        d = Psi.shape[1]
        if d == 0:
            raise ValueError("the feature map produced no features and fit_intercept=False.")
        # exact rescaling of each psi column (R* and the classifier are invariant to it)
        if sp.issparse(Psi):
            scale = abs(Psi).max(axis=0).toarray().ravel()
            scale[scale == 0] = 1.0
            Psi_s = sp.csr_matrix(Psi @ sp.diags(1.0 / scale))
        else:
            scale = np.abs(Psi).max(axis=0)
            scale[scale == 0] = 1.0
            Psi_s = np.ascontiguousarray(Psi / scale)
        embedding = _embedding(K, self.one_hot)
        tau_s, lam_s = mrc_statistics(Psi_s, y_idx, K, self.s, sample_weight, embedding)
        if self.loss == "log":
            res = mrc_log_ccg(
                Psi_s, y_idx, K, tau_s, lam_s, sample_weight=sample_weight,
                embedding=embedding, eps1=self.eps1, n_max=self.n_max, max_iter=self.max_iter,
                tol=min(self.tol, 1e-8), time_limit=self.time_limit, verbose=self.verbose,
            )
        else:
            res = mrc_ccg(
                Psi_s, y_idx, K, tau_s, lam_s, sample_weight=sample_weight, embedding=embedding,
                eps1=self.eps1, eps2=self.eps2, n_max=self.n_max, m_max=self.m_max,
                max_iter=self.max_iter, lp_solver=self.lp_solver, tol=self.tol,
                time_limit=self.time_limit, backend=backend, verbose=self.verbose,
            )
        q = K if embedding is None else embedding.shape[1]
        full_scale = np.tile(scale, q)
        self.label_embedding_ = embedding
        # what get_lower_bound / get_upper_bound need: the training support and statistics
        self._training_ = (Psi_s, y_idx, sample_weight, tau_s, lam_s, res.mu)
        self.n_phi_features_ = d
        self.mu_ = res.mu / full_scale
        self.tau_ = tau_s * full_scale
        self.lambda_ = lam_s * full_scale
        self.nu_ = res.nu
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        self.R_history_ = res.R_history
        self.upper_history_ = res.upper_history
        self.lower_history_ = res.lower_history
        self.n_constraints_ = res.n_constraints
        self.n_lp_rows_ = res.n_lp_rows
        self.n_active_features_ = len(res.active_features)
        self.selected_features_ = res.active_features
        self.lp_solver_ = res.lp_solver
        self._certify(res, t0, fingerprint, n_given, kept)
        return self

    def _certify(self, res, t0: float, fingerprint: str, n_given: int, kept) -> None:
        """Price the final dual point, set ``certificate_``, and warn where it does not
        prove the minimax risk (a stopped generation, or a gap above ``MRC_RTOL``)."""
        stop_reason = None if res.stop_reason is None else StopReason(res.stop_reason)
        # the dual LP over all rows can take many times the generation's time (many random
        # features on a large data set); past its share, the generation's own bound stands
        # in where it is higher (proven as well, its dual point is not kept); after Ctrl-C,
        # whoever pressed it waits no longer than the minimum
        now = time.perf_counter()
        share = 0.0 if stop_reason is StopReason.INTERRUPTED else _DUAL_SHARE
        deadline = now + max(_DUAL_MIN_SECONDS, share * (now - t0))
        if self.time_limit is not None:
            deadline = min(deadline, t0 + self.time_limit)
        try:
            point = self._final_dual_point(t0, deadline=deadline, seed=res.dual_rows,
                                           upper=res.upper)
        except KeyboardInterrupt:  # the model stands; its bound falls back to the class
            # averages' (the policy of exactclf._fit_guard: the best model, with a warning)
            warn("MRCCCG interrupted while pricing its dual bound: lower_ is the "
                 "class-average rows' bound", RuntimeWarning)
            point = self._final_dual_point(t0, deadline=time.perf_counter(),
                                           seed=res.dual_rows, upper=res.upper)
            stop_reason = StopReason.INTERRUPTED
        cut_short = time.perf_counter() >= deadline
        witness = self._witness(point, kept)
        # only where the point falls short of the tolerance: a re-checkable bound is worth
        # more than one higher by rounding
        if res.lower - point.bound > MRC_RTOL * abs(res.upper):
            point_bound = point.bound
            point = point._replace(bound=res.lower)
            witness = Witness("none", note=(
                "the generation's dual bound (row duals, every feature priced): its dual "
                f"point is not kept; the final dual LP, cut at its time share, proved "
                f"{point_bound!r}"))
        # a dual point at R* = R(mu) proves it up to rounding, which may land an ulp above
        bound = min(point.bound, res.upper)
        gap = relative_gap(res.upper, bound)
        optimal = res.converged and stop_reason is None and gap <= MRC_RTOL
        if res.converged and stop_reason is None and not optimal:
            stop_reason = _GAP_STOP
        self.certificate_ = Certificate(
            type(self).__name__, _MODEL_CLASS[self.loss], MRC_OBJECTIVES[self.loss],
            value=res.upper, bound=bound,
            bound_method="dual point of the MRC program: weights on its rows (sample, label "
                         "distribution) and class-average rows, priced over every feature",
            is_optimal=bool(optimal),
            stop_reason=stop_reason,
            fit_time=time.perf_counter() - t0, fingerprint=fingerprint, n_samples=n_given,
            rtol=MRC_RTOL, witness=witness,
        )
        if not res.converged:
            why = {
                StopReason.MAX_ITER: f"after max_iter={self.max_iter} LP solves",
                StopReason.TIME_LIMIT: f"at time_limit={self.time_limit} s",
                StopReason.INTERRUPTED: "on an interrupt (Ctrl-C)",
            }[res.stop_reason]
            warn(
                f"MRCCCG stopped {why} before the generation converged (rows violated by up "
                f"to {res.max_violation:.3g}, eps1={self.eps1}); the returned classifier is the "
                f"best point found, with certified bounds: R* in [lower_={self.lower_:.6g}, "
                f"upper_={self.upper_:.6g}] (relative gap {self.gap_:.3g}). Increase max_iter, "
                "n_max or time_limit for a smaller gap.",
                ConvergenceWarning,
            )
        elif stop_reason is _GAP_STOP:
            warn(
                f"MRCCCG converged, but lower_={self.lower_:.6g} is {self.gap_:.3g} (relative) "
                f"below upper_={self.upper_:.6g}, more than MRC_RTOL={MRC_RTOL:g}, so "
                f"is_optimal is False (stop_reason_ {str(stop_reason)!r}): "
                f"{self._gap_cause(res, cut_short)} Both bounds hold.",
                ConvergenceWarning,
            )

    def _gap_cause(self, res, cut_short: bool) -> str:
        """Why a converged generation's certificate leaves a gap above ``MRC_RTOL``."""
        Psi_s, y_idx, _, tau_s, lam_s, _ = self._training_
        causes = []
        gap, slack = res.upper - self.certificate_.bound, self.eps1 + self.tol
        if self.loss == "0-1" and slack >= 0.1 * gap:
            # converged leaves rows violated by up to eps1 (to the LP solver's tolerance):
            # R(mu) may exceed R* by that much, which relative to R* may exceed MRC_RTOL
            causes.append(
                f"the generation stops with rows violated by up to eps1={self.eps1} (to the LP "
                f"solver's tolerance tol={self.tol}), so upper_ may exceed R* by that much "
                f"({slack / abs(res.upper):.3g} of upper_); decrease eps1 (or tol) for a "
                "smaller gap.")
        if cut_short:
            causes.append("The final dual LP stopped at its time share (half the "
                          "generation's time) before its bound met upper_.")
        if self.loss == "log" and np.any(lam_s == 0.0):
            causes.append(
                "Where lambda_ is 0 (a feature constant within a class) the optimum may lie "
                "at infinity, approached by no finite iterate closely.")
        if not pinned_signs_agree(Psi_s, y_idx, len(self.classes_), tau_s,
                                  self.label_embedding_, zero_tol=1e-12):
            causes.append(
                "Some features are constant over the training pairs (lambda_ 0) and take "
                "both signs on other labels: a dual point proves a bound only where its "
                "weights on them cancel exactly in floating point.")
        if not causes:
            causes.append(
                "the dual point, priced over every feature, proves no more: a dual "
                f"constraint met only to the LP solver's tolerance tol={self.tol} costs the "
                "bound in proportion to that over lambda_, which may be tiny; decrease tol.")
        return " ".join(causes)

    def _final_dual_point(self, t0: float, deadline: float | None = None, seed=None,
                          upper: float = np.inf) -> DualPoint:
        """The certificate's dual point (:func:`~._bounds.dual_point`): column generation on
        the dual over all rows, from the rows most violated at the returned ``mu``, to within
        ``(eps1 + tol) / 10`` of ``R*``, within the ``time_limit`` counted from ``t0`` (or by
        ``deadline``), starting from the dual point ``seed`` as well (``dual_rows`` of
        :class:`~._ccg.CCGResult`), which is the result where it proves ``upper`` to the
        generation's own tolerance ``eps1 + tol`` and to ``MRC_RTOL``, relative below 1 (so
        that it also proves optimality, :meth:`_certify`): pricing on costs up to half the
        fit's time again for a ``lower_`` tighter than that, which the certificate does not
        need.

        At convergence the generation's last dual point usually proves ``R*`` already; where
        not (a stopped generation; column generation, whose duals price features it left
        out), the rows most violated at a nearly optimal ``mu`` and the seed's carry a nearly
        optimal dual point, so few rounds follow.
        """
        Psi_s, y_idx, weight, tau_s, lam_s, mu_s = self._training_
        K = len(self.classes_)
        V = np.asarray(Psi_s @ class_scores_matrix(mu_s, K, Psi_s.shape[1],
                                                   self.label_embedding_).T)
        # the columns are scaled to a largest |psi| of 1: an excess |z_j| - lambda_j at a
        # vertex is rounding far below this (as in the generation)
        return dual_point(Psi_s, y_idx, K, tau_s, lam_s, V, loss=self.loss,
                          tol=0.1 * (self.eps1 + self.tol), sample_weight=weight,
                          embedding=self.label_embedding_, zero_tol=1e-12, seed=seed,
                          upper=upper,
                          enough=min(self.eps1 + self.tol, MRC_RTOL) * min(1.0, abs(upper)),
                          deadline=deadline if deadline is not None or self.time_limit is None
                          else t0 + self.time_limit)

    def _witness(self, point: DualPoint, kept: np.ndarray) -> Witness:
        """The ``"mrc_dual"`` witness: the primal point and the dual point, the rows named
        by the index of their sample in the data passed to ``fit``."""
        data = {"loss": self.loss, "mu": self.mu_.tolist(), "nu": float(self.nu_),
                "sample": kept[point.sample].tolist(), "alpha": point.alpha.tolist(),
                "class_alpha": point.class_alpha.tolist()}
        if self.loss == "log":
            data["q"] = point.Q.tolist()
        else:
            data["labels"] = [np.flatnonzero(q > 0).tolist() for q in point.Q]
        return Witness(
            "mrc_dual",
            "R(mu) re-evaluated over every sample and label subset; the dual point (weights "
            "on rows (sample, label subset or distribution) and on the class-average rows) "
            "priced over every feature",
            data,
        )

    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        M = class_scores_matrix(self.mu_, len(self.classes_), self.n_phi_features_,
                                self.label_embedding_)
        return np.asarray(self._psi(X) @ M.T)

    def decision_function(self, X):
        """Scores ``Phi(x, y)^T mu_``; for two classes, that of ``classes_[1]`` minus that of
        ``classes_[0]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        V = self._scores(X)
        return V[:, 1] - V[:, 0] if V.shape[1] == 2 else V

    def predict_proba(self, X):
        """The MRC's randomized rule ``h(y|x) = (Phi(x, y)^T mu_ - nu_ + 1)_+ / c_x``.

        ``c_x`` normalizes the row; rows where every term is 0 are uniform. On the training
        inputs ``c_x <= 1``, which is what makes ``upper_`` bound this rule's expected error.
        With ``loss="log"`` the rule is the softmax of the scores ``Phi(x, y)^T mu_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        if self.loss == "log":
            return softmax(self._scores(X), axis=1)
        return _randomized_rule(self._scores(X), self.nu_)

    def predict(self, X):
        """The deterministic rule: the class of the highest score ``Phi(x, y)^T mu_`` (also a
        most probable class of ``predict_proba``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self._scores(X), axis=1)]

    def _rule_loss(self, rule: str) -> np.ndarray:
        """Loss of the randomized or deterministic rule at every training input and label."""
        Psi_s, _, _, _, _, mu_s = self._training_
        K = len(self.classes_)
        V = np.asarray(Psi_s @ class_scores_matrix(mu_s, K, Psi_s.shape[1],
                                                   self.label_embedding_).T)
        if rule == "randomized":
            if self.loss == "log":
                return logsumexp(V, axis=1)[:, None] - V
            return 1.0 - _randomized_rule(V, self.nu_)
        if rule == "deterministic":
            if self.loss == "log":
                raise ValueError("the deterministic rule has an infinite log loss wherever it "
                                 "errs: its bounds exist for loss='0-1' only.")
            loss = np.ones_like(V)
            loss[np.arange(len(V)), np.argmax(V, axis=1)] = 0.0
            return loss
        raise ValueError(f"rule must be 'randomized' or 'deterministic', got {rule!r}")

    def _rule_bound(self, rule: str, sense: str) -> float:
        Psi_s, y_idx, weight, tau_s, lam_s, _ = self._training_
        return rule_loss_bound(
            Psi_s, y_idx, self._rule_loss(rule), tau_s, lam_s, len(self.classes_),
            sense=sense, sample_weight=weight, embedding=self.label_embedding_,
            n_max=self.n_max, max_iter=self.max_iter, tol=self.tol,
            lp_solver=self.lp_solver_ if self.loss == "0-1" else self.lp_solver,
        )

    def get_upper_bound(self, rule: str = "randomized") -> float:
        """Upper bound on the expected 0-1 loss of the fitted rule over the uncertainty set.

        The distributions are those of the uncertainty set supported on the training inputs
        (the empirical distribution is one).

        Parameters
        ----------
        rule : {"randomized", "deterministic"}, default="randomized"
            ``"randomized"`` (``predict_proba``): ``upper_``, the minimax risk bound
            ``R(mu_)`` (MRCpy's ``get_upper_bound``). ``"deterministic"`` (``predict``): the
            largest expected loss of ``predict`` over the set, bounded by an LP solved by
            constraint generation and certified by weak duality; at most ``2 upper_`` (which
            is returned if the LP bound is larger).

        Returns
        -------
        float

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from exactclf.mrc import MRCCCG
        >>> X, y = load_iris(return_X_y=True)
        >>> clf = MRCCCG().fit(X, y)
        >>> clf.get_upper_bound() == clf.upper_
        True
        >>> bool(clf.get_upper_bound("deterministic") <= 2 * clf.upper_)
        True
        """
        check_is_fitted(self)
        if rule == "randomized":
            return float(self.upper_)
        return min(self._rule_bound(rule, "upper"), 2.0 * float(self.upper_))

    def get_lower_bound(self, rule: str = "randomized") -> float:
        """Lower bound on the expected 0-1 loss of the fitted rule over the uncertainty set.

        ``min_p E_p[loss]`` over the distributions ``p`` of the uncertainty set supported on
        the training inputs (MRCpy's ``get_lower_bound``): an LP in ``p`` whose dual
        ``max_mu tau^T mu - lambda^T |mu| + min_{i, y} (loss(x_i, y) - Phi(x_i, y)^T mu)`` is
        maximized by constraint generation; the value at the best ``mu`` found is returned,
        a lower bound by weak duality. Since the empirical distribution is in the set, the
        rule's expected training loss lies between this and the upper bound.

        Parameters
        ----------
        rule : {"randomized", "deterministic"}, default="randomized"
            The loss of ``predict_proba`` (``1 - h(y|x)``) or of ``predict``.

        Returns
        -------
        float

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from exactclf.mrc import MRCCCG
        >>> X, y = load_iris(return_X_y=True)
        >>> clf = MRCCCG().fit(X, y)
        >>> training_loss = 1 - clf.predict_proba(X)[range(len(y)), y].mean()
        >>> bool(clf.get_lower_bound() <= training_loss <= clf.get_upper_bound())
        True
        """
        check_is_fitted(self)
        bound = self._rule_bound(rule, "lower")
        return bound if bound > 0.0 else 0.0  # the loss is nonnegative

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = self.phi in ("fourier", "relu") and self.random_state is None
        return tags


def _embedding(n_classes: int, one_hot: bool):
    """``B`` of ``Phi(x, y) = B_y (x) psi(x)``: None (one-hot) or, for two classes without
    one-hot, ``sigma = (-1, +1)``."""
    if one_hot or n_classes != 2:
        return None
    return np.array([[-1.0], [1.0]])


def _randomized_rule(V, nu):
    """``h(y|x) = (V[:, y] - nu + 1)_+ / c_x`` row by row, uniform where ``c_x = 0``."""
    H = np.maximum(V - nu + 1.0, 0.0)
    c = H.sum(axis=1, keepdims=True)
    return np.where(c > 0, H / np.where(c > 0, c, 1.0), 1.0 / V.shape[1])


def _import_clarabel():
    try:
        import clarabel
    except ImportError as exc:
        raise ImportError(
            f"loss='log' needs the clarabel package, which is not installed ({exc}). Install "
            "it with `pip install clarabel`, or use loss='0-1'."
        ) from exc
    return clarabel
