"""ThresholdNetLassoCV / ThresholdNetLassoRegressorCV: beta chosen by cross-validation.

Per fold, the dictionary is built once and the path of betas is solved on it (largest beta
first, each solve starting from the previous solution, which seeds the interior-point
method's working set: see :func:`~exactclf.threshold._solvers.solve_lasso`); the hidden
planes of the selected patterns are reconstructed once per pattern and shared by the whole
path. Each fold's network at each beta is the one :class:`ThresholdNetLasso` fits on that
fold with that beta (same dictionary for the same ``random_state``; the same solution, to
the solvers' accuracy), so the choice agrees with a ``GridSearchCV`` over the same grid and
folds. The final model is a certified refit on all the data at the chosen beta.
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import _fit_context, clone, is_classifier
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _check_sample_weight

from .._certificate import data_fingerprint
from .._fit_guard import guarded_fit
from ._lasso import _DOC_ATTRS, _DOC_PARAMS, ThresholdNetLasso, ThresholdNetLassoRegressor
from ._path import beta_grid
from ._problem import beta_max

__all__ = ["ThresholdNetLassoCV", "ThresholdNetLassoRegressorCV"]


def _fold_path(est, X, y, sw, train, test, betas):
    """Scores, neuron counts and duality gaps of ``est`` fitted on ``train`` at every beta
    (largest first), scored on ``test`` (accuracy, or mean squared error)."""
    Xt, Yt, swt = est._validated(X[train], y[train], sw[train])
    problem = est._problem(Xt, Yt, swt, getattr(est, "loss", "squared"),
                           data_fingerprint(Xt, y[train], sw[train]))
    first = None if problem.mode == "closed_form" else problem.first_layer(est.reconstruction)
    out = np.zeros((3, len(betas)))
    W = None
    for j, beta in enumerate(betas):
        if first is None:
            est._fit_closed_form(problem, beta)
        else:
            W = est._fit_problem(problem, beta, first, w0=W)
        if is_classifier(est):
            out[0, j] = est.score(X[test], y[test])
        else:
            out[0, j] = np.mean((est.predict(X[test]) - y[test]) ** 2)
        out[1, j], out[2, j] = est.n_neurons_, est.dual_gap_
    return out


class _CVMixin:
    """Path per fold, choice of beta, certified refit."""

    _cv_constraints: dict = {
        "betas": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "eps": [Interval(Real, 0, 1, closed="neither")],
        "cv": ["cv_object"],
        "n_jobs": [Integral, None],
    }

    def _fit_cv(self, X, y, sample_weight, base):
        t0 = time.perf_counter()
        Xv, Y, sw = self._validated(X, y, sample_weight)
        # each fold's estimator weighs its own training samples (class_weight="balanced"
        # on the fold's labels), as GridSearchCV's clones would: it gets the raw weights
        raw = _check_sample_weight(sample_weight, Xv, ensure_non_negative=True)
        fingerprint = data_fingerprint(Xv, y, sample_weight)
        y = np.asarray(y)
        loss = getattr(self, "loss", "squared")
        problem = self._problem(Xv, Y, sw, loss, fingerprint)
        self.betas_ = beta_grid(beta_max(problem), self.betas, self.eps)
        folds = list(check_cv(self.cv, y, classifier=is_classifier(self)).split(Xv, y))
        params = {k: v for k, v in self.get_params().items() if k in base().get_params()}
        template = base(**params)
        if self.verbose:
            print(f"{type(self).__name__}: {len(self.betas_)} betas x {len(folds)} folds")
        paths = Parallel(n_jobs=self.n_jobs)(
            delayed(_fold_path)(clone(template), Xv, y, raw, train, test, self.betas_)
            for train, test in folds)
        paths = np.stack(paths, axis=-1)  # (3, n_betas, n_folds)
        mean = paths[0].mean(axis=1)
        # the first best in the grid (largest beta: fewest neurons), as GridSearchCV breaks ties
        best = int(np.argmax(mean) if is_classifier(self) else np.argmin(mean))
        self.beta_ = float(self.betas_[best])
        self._set_paths(paths[0])
        self.n_neurons_path_ = paths[1].astype(int)
        self.dual_gap_path_ = paths[2]
        if problem.mode == "closed_form":
            self._fit_closed_form(problem, self.beta_, t0)
        else:
            self._fit_problem(problem, self.beta_, problem.first_layer(self.reconstruction),
                              t0=t0)
        return self


_DOC_CV_PARAMS = """
    betas : int or array-like, default=10
        A count: that many values spaced evenly on a log scale from ``beta_max``, the
        smallest beta giving the zero network on all the data, down to ``eps * beta_max``.
        Or the values themselves (sorted largest first into ``betas_``).
    eps : float, default=1e-3
        ``beta_min / beta_max`` of a generated grid.
    cv : int, cross-validation generator or iterable, default=None
        As in scikit-learn (None: 5 folds; stratified for the classifier).
    n_jobs : int, default=None
        Folds fitted in parallel (joblib)."""

_DOC_CV_ATTRS = """
    beta_ : float
        The chosen beta; the final network is fitted on all the data with it.
    betas_ : ndarray of shape (n_betas,)
        The grid, largest first.
    n_neurons_path_ : ndarray of shape (n_betas, n_folds)
        Neurons of each fold's network.
    dual_gap_path_ : ndarray of shape (n_betas, n_folds)
        Duality gap of each fold's network on its training data (its certificate)."""


class ThresholdNetLassoCV(_CVMixin, ThresholdNetLasso):
    __doc__ = f"""Threshold-network classifier with ``beta`` chosen by cross-validation.

    For each fold, the arrangement dictionary is built once and the certified networks of
    every beta in the grid are fitted on it (a regularization path; the hidden planes of a
    pattern are computed once for the whole path), then scored by accuracy on the held-out
    samples. ``beta_`` maximizes the mean accuracy (ties: the largest beta); the final
    network is a certified :class:`ThresholdNetLasso` fit on all the data at ``beta_``.
    Each fold's network is the one ``ThresholdNetLasso(beta=...)`` fits on that fold, so
    the choice is that of ``GridSearchCV`` over the same grid and folds, at a fraction of
    its cost.

    Parameters
    ----------
    {_DOC_CV_PARAMS}
    {_DOC_PARAMS}
    loss : {{"squared", "logistic", "hinge"}}, default="squared"
        Output loss, as in :class:`ThresholdNetLasso`.
    class_weight : dict, "balanced" or None, default=None
        As in :class:`ThresholdNetLasso`: each sample's loss is weighted by its sample weight
        times its class's weight. Each fold's network computes ``"balanced"`` from its own
        training labels (as ``GridSearchCV`` would); the final network from all of them.

    Attributes
    ----------
    accuracy_path_ : ndarray of shape (n_betas, n_folds)
        Held-out accuracy of each fold's network at each beta (``betas_`` order).
    {_DOC_CV_ATTRS}
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_outputs, `n_neurons_`)
    {_DOC_ATTRS}

    See Also
    --------
    ThresholdNetLasso : the estimator at a fixed beta.
    threshold_path : the path of certified solutions on one dictionary.

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf.threshold import ThresholdNetLassoCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 2))
    >>> y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> clf = ThresholdNetLassoCV(betas=5, cv=3, n_arrangements=100, random_state=0)
    >>> clf = clf.fit(X, y)
    >>> clf.accuracy_path_.shape, bool(clf.beta_ in clf.betas_)
    ((5, 3), True)
    >>> bool(clf.dual_gap_ <= 1e-6 * 60)
    True
    """

    _parameter_constraints: dict = {
        **{k: v for k, v in ThresholdNetLasso._parameter_constraints.items() if k != "beta"},
        **_CVMixin._cv_constraints,
    }

    def __init__(
        self,
        *,
        betas=10,
        eps=1e-3,
        cv=None,
        n_jobs=None,
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
        self.betas = betas
        self.eps = eps
        self.cv = cv
        self.n_jobs = n_jobs
        self.arrangements = arrangements
        self.n_arrangements = n_arrangements
        self.class_weight = class_weight
        self.loss = loss
        self.reconstruction = reconstruction
        self.hidden_layer_sizes = hidden_layer_sizes
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def _set_paths(self, scores):
        self.accuracy_path_ = scores

    @_fit_context(prefer_skip_nested_validation=True)
    @guarded_fit
    def fit(self, X, y, sample_weight=None):
        """Choose beta by cross-validation, then fit the certified network at it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative per-sample weights of the training loss (held-out accuracy is
            unweighted).

        Returns
        -------
        self : ThresholdNetLassoCV
        """
        return self._fit_cv(X, y, sample_weight, ThresholdNetLasso)


class ThresholdNetLassoRegressorCV(_CVMixin, ThresholdNetLassoRegressor):
    __doc__ = f"""Threshold-network regressor with ``beta`` chosen by cross-validation.

    The regression counterpart of :class:`ThresholdNetLassoCV`: ``beta_`` minimizes the
    mean held-out squared error (``mse_path_``), like scikit-learn's ``LassoCV``; the same
    choice as ``GridSearchCV(scoring="neg_mean_squared_error")`` over the same grid and
    folds.

    Parameters
    ----------
    {_DOC_CV_PARAMS}
    {_DOC_PARAMS}

    Attributes
    ----------
    mse_path_ : ndarray of shape (n_betas, n_folds)
        Held-out mean squared error of each fold's network at each beta.
    {_DOC_CV_ATTRS}
    coef_ : ndarray of shape (`n_neurons_`,) or (n_targets, `n_neurons_`)
    {_DOC_ATTRS}

    See Also
    --------
    ThresholdNetLassoRegressor : the estimator at a fixed beta.

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf.threshold import ThresholdNetLassoRegressorCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (40, 1))
    >>> y = np.where(X[:, 0] > 0, 1.0, -1.0) + 0.1 * rng.standard_normal(40)
    >>> reg = ThresholdNetLassoRegressorCV(betas=6, cv=4).fit(X, y)
    >>> reg.mse_path_.shape, reg.is_optimal_
    ((6, 4), True)
    """

    _parameter_constraints: dict = {
        **{k: v for k, v in ThresholdNetLassoRegressor._parameter_constraints.items()
           if k != "beta"},
        **_CVMixin._cv_constraints,
    }

    def __init__(
        self,
        *,
        betas=10,
        eps=1e-3,
        cv=None,
        n_jobs=None,
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
        self.betas = betas
        self.eps = eps
        self.cv = cv
        self.n_jobs = n_jobs
        self.arrangements = arrangements
        self.n_arrangements = n_arrangements
        self.reconstruction = reconstruction
        self.hidden_layer_sizes = hidden_layer_sizes
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def _set_paths(self, scores):
        self.mse_path_ = scores

    @_fit_context(prefer_skip_nested_validation=True)
    @guarded_fit
    def fit(self, X, y, sample_weight=None):
        """Choose beta by cross-validation, then fit the certified network at it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative per-sample weights of the training loss (the held-out error is
            unweighted).

        Returns
        -------
        self : ThresholdNetLassoRegressorCV
        """
        return self._fit_cv(X, y, sample_weight, ThresholdNetLassoRegressor)
