"""NGDClassifier: neural classifier whose convex last layer is fitted by Newton steps."""

from __future__ import annotations

import math
import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state, gen_batches
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.multiclass import (
    _check_partial_fit_first_call,
    check_classification_targets,
    unique_labels,
)
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .._backend import resolve_device
from .._base import reset_fitted
from .._certificate import (
    NGD_OBJECTIVE,
    Certificate,
    StopReason,
    Witness,
    data_fingerprint,
)
from .._fit_guard import guarded_fit
from .._geometry import check_spread
from .._warnings import warn
from ._device import DeviceBatches, device_stream
from ._mlp import (
    ACTIVATIONS,
    AdamState,
    adam_update,
    backprop,
    forward_hidden,
    glorot_uniform_init,
    identifies_output_layer,
    log_probabilities,
    logit_gradient,
    network_loss,
    newton_output_layer,
    output_logits,
    probabilities,
)

__all__ = ["NGDClassifier"]

#: batch size of ``batch_size="auto"`` (as in scikit-learn's MLP): ``min(200, n_samples)``
_AUTO_BATCH = 200


class NGDClassifier(ClassifierMixin, BaseEstimator):
    """Neural-network classifier trained by Newton steps on its convex last layer.

    The network is a multilayer perceptron: hidden layers ``hidden_layer_sizes`` with the
    ``activation``, then a linear output layer with a logistic (two classes) or softmax
    output, trained on the cross-entropy plus an L2 penalty (``alpha``) as in
    :class:`sklearn.neural_network.MLPClassifier`. Given the hidden layers, the last hidden
    layer's outputs are a fixed basis and the cross-entropy is *convex* in the output layer.
    Solver ``"ngd"`` alternates between the two blocks: a Newton phase of ``newton_steps``
    inexact Newton steps on the output layer (Hessian-vector products of the cross-entropy,
    ``cg_iter`` conjugate-gradient iterations, Armijo backtracking) moves the output layer
    towards its optimum for the current basis, and one Adam step on the hidden layers, taken
    at that fitted output layer, moves the basis. The phase is truncated on purpose: with the
    defaults it does not reach the optimum of an ill-conditioned basis (which may need very
    large output weights) in one batch but approaches it over the iterations, and that
    regularizes; a much larger ``cg_iter`` (or the exact Newton step) trains worse. Per
    minibatch the Newton phase comes first and the Adam step on the hidden layers, at the
    fitted output layer, second: both use the batch's one forward pass (the model returned
    has its output layer fitted to the hidden layers of one Adam step before). On a minibatch
    the phase minimizes the batch objective plus a proximal term that models the other
    ``n / b - 1`` batches around the current output layer (``n / b - 1`` times the batch
    Hessian's mean eigenvalue times half the squared distance moved), so a small batch moves
    the layer little: without it a batch of a few samples fits its own optimum and training
    falls far behind Adam. A full batch has no proximal term. A minibatch that cannot
    determine the output layer (fewer samples than ``hidden_layer_sizes[-1] + 1``, the output
    layer's parameters per output, or a class missing from it) gets the ``"adam"`` step on
    all layers instead, so with batches that small NGD is exactly Adam. Solver ``"adam"`` trains the
    identical network with Adam on all layers, exactly as MLPClassifier does (same
    initialization, minibatches and updates): the baseline.

    Parameter names and behaviour follow MLPClassifier where the meaning is the same, so it
    is a drop-in replacement (the MLP solvers ``"sgd"``/``"lbfgs"`` and their parameters are
    not offered). The forward and backward passes are plain array code written once for
    NumPy and CuPy: ``device="gpu"`` trains on a CUDA GPU without a deep-learning framework.

    Cost per minibatch of ``b`` samples, basis width ``m`` and ``k`` outputs: one forward and
    one backward pass (as for Adam) plus, per Newton step, ``2 * cg_iter + 2`` products of
    the ``b x (m + 1)`` basis (or its transpose) with ``(m + 1) x k`` matrices, a few
    elementwise passes over ``b x k`` arrays and one ``exp`` of them per line-search trial
    (the Hessian-vector products of a batch over 1024 samples use a subsample of it). That
    does not grow with the hidden layers: a full-batch NGD epoch costs about as much as an
    MLPClassifier epoch, one of small batches on a wide output layer somewhat more
    (``benchmarks/ngd_vs_adam.py``; figures in ``benchmarks/results/ngd_vs_adam.txt``).

    Parameters
    ----------
    hidden_layer_sizes : array-like of shape (n_hidden_layers,) or int, default=(100,)
        Widths of the hidden layers; the last one is the basis that the output layer
        combines. ``()`` gives a linear model (multinomial logistic regression).
    activation : {"identity", "logistic", "tanh", "relu"}, default="relu"
        Activation of the hidden layers.
    solver : {"ngd", "adam"}, default="ngd"
        ``"ngd"``: per minibatch, Newton steps on the output layer, then an Adam step on the
        hidden layers. ``"adam"``: Adam on all layers (MLPClassifier's solver).
    newton_steps : int, default=5
        Newton steps on the output layer per minibatch, at most (``"ngd"`` only).
    newton_tol : float, default=1e-4
        The Newton phase stops before a step whose predicted decrease of the batch objective
        (half the directional derivative) is below ``newton_tol`` times the objective
        (``"ngd"`` only); ``0`` always takes ``newton_steps`` steps.
    cg_iter : int, default=3
        Conjugate-gradient iterations per Newton step. Few iterations are deliberate: the
        truncated step regularizes; with ``cg_iter=10`` or more and a small ``alpha``, the
        output layer overfits the current basis and training is slower (``"ngd"`` only).
    armijo_alpha : float, default=1e-4
        Sufficient-decrease constant of the Armijo backtracking (``"ngd"`` only).
    armijo_rho : float, default=0.5
        Step-length reduction factor of the backtracking (``"ngd"`` only).
    alpha : float, default=1e-4
        Strength of the L2 penalty on all weight matrices (not intercepts); as in
        MLPClassifier the penalty ``alpha / 2 * sum ||W||^2`` is divided by the number (total
        weight) of samples in the batch.
    batch_size : int or "auto", default="auto"
        Minibatch size; ``"auto"`` is ``min(200, n_samples)``. Values above the number of
        samples are clipped (with a warning). Use ``n_samples`` for full-batch training.
    learning_rate_init : float, default=1e-3
        Adam's step size.
    max_iter : int, default=200
        Maximum number of epochs (passes over the training data).
    shuffle : bool, default=True
        Whether to shuffle the samples at every epoch.
    random_state : int, RandomState instance or None, default=None
        Seeds the weight initialization, the early-stopping split and the shuffling. The
        same value gives the same initial network as MLPClassifier's.
    tol : float, default=1e-4
        Training stops when the training loss does not decrease by at least ``tol`` (or the
        validation accuracy does not increase by at least ``tol`` with ``early_stopping``)
        for more than ``n_iter_no_change`` consecutive epochs.
    verbose : int, default=0
        ``>= 1`` prints the loss (and validation score) of every epoch.
    warm_start : bool, default=False
        Reuse the weights of the previous ``fit`` as initialization (the Adam moments are
        reset, as in MLPClassifier).
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the training data (stratified for two classes,
        as in MLPClassifier), stop when its accuracy stops improving, and keep the weights
        of the best epoch.
    validation_fraction : float, default=0.1
        Fraction held out with ``early_stopping``.
    beta_1 : float, default=0.9
        Decay rate of Adam's first-moment estimate.
    beta_2 : float, default=0.999
        Decay rate of Adam's second-moment estimate.
    epsilon : float, default=1e-8
        Adam's denominator offset.
    n_iter_no_change : int or inf, default=10
        Epochs without ``tol`` improvement tolerated before stopping.
    device : {"auto", "cpu", "gpu"}, default="auto"
        Where to train: ``"gpu"`` runs the same array code on CuPy (extra
        ``exactclf[gpu]``), each batch shape's step replayed as a CUDA graph from its second
        batch (see the user guide); ``"auto"`` uses a usable GPU only for batches large enough to
        win there (batch size times the number of weights at least
        ``exactclf._backend.GPU_BREAK_EVEN["ngd"]``, measured: smaller batches ran faster on
        the CPU).
        Fitted weights are always NumPy arrays and prediction runs on the CPU.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coefs_ : list of ndarray
        ``coefs_[i]`` is the weight matrix from layer ``i`` to layer ``i + 1``; the last
        one, of shape ``(hidden_layer_sizes[-1], n_outputs_)``, is the output layer.
    intercepts_ : list of ndarray
        ``intercepts_[i]`` is the intercept vector of layer ``i + 1``.
    loss_ : float
        Training objective (cross-entropy plus penalty) of the last epoch.
    best_loss_ : float or None
        Smallest ``loss_`` seen; None with ``early_stopping``.
    loss_curve_ : list of float
        Objective per epoch: the mean over the minibatches (weighted by their sizes) of each
        batch's objective; for ``"adam"`` taken before the batch's update (as in
        MLPClassifier), for ``"ngd"`` after the Newton phase and before the Adam step on the
        hidden layers (before the update on a batch that got the Adam step instead).
    validation_scores_ : list of float or None
        Validation accuracy per epoch with ``early_stopping``, else None.
    best_validation_score_ : float or None
        Best validation accuracy with ``early_stopping``, else None.
    n_iter_ : int
        Epochs run by the last call to ``fit`` (``partial_fit``: 1).
    t_ : int
        Number of training samples seen (over all calls).
    n_layers_ : int
        Number of layers including input and output.
    n_outputs_ : int
        Number of outputs: 1 for two classes, else ``n_classes``.
    out_activation_ : str
        ``"logistic"`` (two classes) or ``"softmax"``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has feature names that are all strings.
    device_ : str
        Where the model was trained: ``"cpu"`` or ``"gpu"``.
    certificate_ : Certificate
        What the fit proves (:class:`exactclf._certificate.Certificate`): nothing about
        optimality (a local method: ``bound`` is ``-inf``, ``is_optimal`` False,
        ``stop_reason`` ``"no proof: a local method"``); ``value`` is the training objective
        of the returned network on all the data passed to the last ``fit`` or
        ``partial_fit`` (the held-out part with ``early_stopping`` included).

    See Also
    --------
    sklearn.neural_network.MLPClassifier : the same network trained by Adam, SGD or L-BFGS.

    Notes
    -----
    Two classes use one logistic output (as MLPClassifier), not a softmax over two logits:
    the same parametrization as MLPClassifier and LogisticRegression, and its output layer
    problem has no redundant direction. Training stops on ``Ctrl-C`` with a warning, keeping
    the model trained so far.

    References
    ----------
    E. Haber and L. Ruthotto, "Stable architectures for deep neural networks", Inverse
    Problems 34 (2018); arXiv:1705.03341 (2017): the peaks benchmark and the alternating
    Newton (last layer) / gradient (hidden layers) training.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from exactclf.ngd import NGDClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = NGDClassifier(hidden_layer_sizes=(16,), activation="tanh", batch_size=150,
    ...                     learning_rate_init=0.01, random_state=0, device="cpu")
    >>> clf = clf.fit(X, y)
    >>> clf.n_iter_ < clf.max_iter, clf.score(X, y) > 0.95
    (True, True)
    >>> clf.predict_proba(X[:1]).round(2)
    array([[1., 0., 0.]])
    """

    _parameter_constraints: dict = {
        "hidden_layer_sizes": ["array-like", Interval(Integral, 1, None, closed="left")],
        "activation": [StrOptions(set(ACTIVATIONS))],
        "solver": [StrOptions({"ngd", "adam"})],
        "newton_steps": [Interval(Integral, 1, None, closed="left")],
        "cg_iter": [Interval(Integral, 1, None, closed="left")],
        "newton_tol": [Interval(Real, 0, None, closed="left")],
        "armijo_alpha": [Interval(Real, 0, 1, closed="neither")],
        "armijo_rho": [Interval(Real, 0, 1, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "batch_size": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="left")],
        "beta_1": [Interval(Real, 0, 1, closed="left")],
        "beta_2": [Interval(Real, 0, 1, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), Options(Real, {np.inf})],
        "device": [StrOptions({"auto", "cpu", "gpu"})],
    }

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        solver="ngd",
        newton_steps=5,
        cg_iter=3,
        newton_tol=1e-4,
        armijo_alpha=1e-4,
        armijo_rho=0.5,
        alpha=1e-4,
        batch_size="auto",
        learning_rate_init=1e-3,
        max_iter=200,
        shuffle=True,
        random_state=None,
        tol=1e-4,
        verbose=0,
        warm_start=False,
        early_stopping=False,
        validation_fraction=0.1,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        n_iter_no_change=10,
        device="auto",
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.newton_steps = newton_steps
        self.cg_iter = cg_iter
        self.newton_tol = newton_tol
        self.armijo_alpha = armijo_alpha
        self.armijo_rho = armijo_rho
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.tol = tol
        self.verbose = verbose
        self.warm_start = warm_start
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.n_iter_no_change = n_iter_no_change
        self.device = device

    # -- public API ------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    # with warm_start, a fit continues the fitted model, and a failure leaves it as it is
    @guarded_fit(continues=lambda est: est.warm_start and hasattr(est, "coefs_"))
    def fit(self, X, y, sample_weight=None) -> NGDClassifier:
        """Train the network on ``(X, y)`` for up to ``max_iter`` epochs.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (two or more classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples in the cross-entropy (and in the batch
            normalization of the penalty).

        Returns
        -------
        self : NGDClassifier
        """
        return self._fit(X, y, sample_weight, incremental=False)

    @_fit_context(prefer_skip_nested_validation=True)
    # every call after a successful first one continues its model (kept on a failure)
    @guarded_fit(continues=lambda est: hasattr(est, "coefs_"))
    def partial_fit(self, X, y, sample_weight=None, classes=None) -> NGDClassifier:
        """Train for one epoch over ``(X, y)``, continuing from the current model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
        classes : array-like of shape (n_classes,), default=None
            All classes; required on the first call, may be omitted afterwards.

        Returns
        -------
        self : NGDClassifier
        """
        _check_partial_fit_first_call(self, classes)
        return self._fit(X, y, sample_weight, incremental=True)

    def predict(self, X) -> np.ndarray:
        """Most probable class of each sample.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        Z = self._logits(self._check_X(X))
        if Z.shape[1] == 1:
            return self.classes_[(Z[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(Z, axis=1)]

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, columns ordered as ``classes_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        Z = self._logits(self._check_X(X))
        if Z.shape[1] == 1:
            return np.hstack([probabilities(-Z, np), probabilities(Z, np)])
        return probabilities(Z, np)

    def predict_log_proba(self, X) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`, computed without underflow to ``-inf``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return log_probabilities(self._logits(self._check_X(X)), np)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # -- validation ------------------------------------------------------------------------
    def _check_X(self, X):
        return validate_data(self, X, accept_sparse=["csr", "csc"],
                             dtype=(np.float64, np.float32), reset=False)

    def _hidden_units(self) -> list[int]:
        sizes = self.hidden_layer_sizes
        sizes = [sizes] if not hasattr(sizes, "__iter__") else list(sizes)
        if any(s <= 0 for s in sizes) or any(int(s) != s for s in sizes):
            raise ValueError(f"hidden_layer_sizes must be positive integers, got {sizes}.")
        return [int(s) for s in sizes]

    def _validate_input(self, X, y, incremental: bool, reset: bool):
        """Validated ``X`` and the class index of every sample (sets/checks ``classes_``)."""
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"],
                             dtype=(np.float64, np.float32), reset=reset)
        check_classification_targets(y)
        check_spread(X)
        if not hasattr(self, "classes_") or (not self.warm_start and not incremental):
            self.classes_, y_idx = np.unique(y, return_inverse=True)
        else:
            classes = unique_labels(y)
            if self.warm_start and not incremental and set(classes) != set(self.classes_):
                raise ValueError(
                    "warm_start can only be used where `y` has the same classes as in the "
                    f"previous call to fit. Previously got {self.classes_}, `y` has {classes}"
                )
            if len(np.setdiff1d(classes, self.classes_)):
                raise ValueError(
                    f"`y` has classes not in `self.classes_`. `self.classes_` has "
                    f"{self.classes_}. 'y' has {classes}."
                )
            y_idx = np.searchsorted(self.classes_, y)
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes; the data has 1 "
                f"class: {self.classes_[0]!r}."
            )
        return X, np.asarray(y_idx, dtype=np.intp).ravel()

    def _targets(self, y_idx: np.ndarray, dtype=np.float64) -> np.ndarray:
        """0/1 column (two classes) or one-hot rows."""
        if len(self.classes_) == 2:
            return y_idx.astype(dtype)[:, None]
        return np.eye(len(self.classes_), dtype=dtype)[y_idx]

    # -- training --------------------------------------------------------------------------
    def _initialize(self, layer_units: list[int], rng, dtype) -> None:
        self.n_iter_ = 0
        self.t_ = 0
        self.n_outputs_ = layer_units[-1]
        self.n_layers_ = len(layer_units)
        self.out_activation_ = "logistic" if layer_units[-1] == 1 else "softmax"
        coefs, intercepts = glorot_uniform_init(layer_units, self.activation, rng)
        # float32 input trains in float32, as in MLPClassifier
        self.coefs_ = [c.astype(dtype, copy=False) for c in coefs]
        self.intercepts_ = [b.astype(dtype, copy=False) for b in intercepts]
        self._adam = None
        self.loss_curve_ = []
        self._no_improvement_count = 0
        if self.early_stopping:
            self.validation_scores_ = []
            self.best_validation_score_ = -np.inf
            self.best_loss_ = None
        else:
            self.validation_scores_ = None
            self.best_validation_score_ = None
            self.best_loss_ = np.inf

    def _fit(self, X, y, sample_weight, incremental: bool):
        t0 = time.perf_counter()
        hidden = self._hidden_units()
        first_pass = not hasattr(self, "coefs_") or (not self.warm_start and not incremental)
        X, y_idx = self._validate_input(X, y, incremental, reset=first_pass)
        fingerprint = data_fingerprint(X, y, sample_weight)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=X.dtype,
                                                 ensure_non_negative=True)
        if self.early_stopping and incremental:
            raise ValueError("partial_fit does not support early_stopping=True")
        n_classes = len(self.classes_)
        layer_units = [X.shape[1], *hidden, 1 if n_classes == 2 else n_classes]
        rng = check_random_state(self.random_state)
        if first_pass:
            self._initialize(layer_units, rng, X.dtype)
        elif [c.shape[0] for c in self.coefs_] + [self.coefs_[-1].shape[1]] != layer_units:
            raise ValueError(
                "the network of the previous fit has layer sizes "
                f"{[c.shape[0] for c in self.coefs_] + [self.coefs_[-1].shape[1]]}; "
                f"continuing needs {layer_units}. Set warm_start=False to start afresh."
            )
        weights = sum(a * b for a, b in zip(layer_units[:-1], layer_units[1:], strict=True))
        backend = resolve_device(self.device, "ngd", self._batch_size(X.shape[0]) * weights)
        self.device_ = "gpu" if backend.name == "gpu" else "cpu"
        with device_stream(backend.xp):
            self._train(X, y_idx, sample_weight, rng, backend, incremental)
        if not all(np.isfinite(a).all() for a in (*self.coefs_, *self.intercepts_)):
            reset_fitted(self)  # never a model with non-finite weights
            raise ValueError(
                "Solver produced non-finite parameter weights. The input data may contain "
                "large values and need to be preprocessed."
            )
        self.certificate_ = self._certificate(X, y_idx, sample_weight, fingerprint, t0)
        return self

    def _certificate(self, X, y_idx, sw, fingerprint, t0) -> Certificate:
        """The certificate of a local method: the returned network's training objective
        and no bound."""
        total = float(X.shape[0] if sw is None else sw.sum())
        value = network_loss(self._logits(X), self._targets(y_idx, X.dtype), sw,
                             total if total > 0 else 1.0, self.coefs_, self.alpha, np)
        return Certificate(
            type(self).__name__,
            f"multilayer perceptrons with hidden layers {tuple(self._hidden_units())} "
            f"({self.activation}) and a {self.out_activation_} output",
            NGD_OBJECTIVE,
            value=float(value), bound=-math.inf, bound_method="none", is_optimal=False,
            stop_reason=StopReason.NO_PROOF, fit_time=time.perf_counter() - t0,
            fingerprint=fingerprint, n_samples=X.shape[0],
            witness=Witness("none", "a local method: no optimality proof"),
        )

    def _batch_size(self, n_samples: int) -> int:
        """The samples per batch: ``batch_size`` (``"auto"``: ``min(200, n_samples)``),
        clipped to ``[1, n_samples]``."""
        if self.batch_size == "auto":
            return min(_AUTO_BATCH, n_samples)
        return int(np.clip(self.batch_size, 1, n_samples))

    def _train(self, X, y_idx, sw, rng, backend, incremental: bool) -> None:
        xp = backend.xp
        early = self.early_stopping
        if early:
            # stratified for one output (two classes) only: MLPClassifier's rule, which
            # gives the same split (the same iterates) for the same random_state
            Y_strat = self._targets(y_idx).astype(bool) if self.n_outputs_ == 1 else None
            arrays = (X, y_idx) if sw is None else (X, y_idx, sw)
            parts = train_test_split(*arrays, random_state=rng,
                                     test_size=self.validation_fraction, stratify=Y_strat)
            X, X_val, y_idx, y_val = parts[:4]
            sw, sw_val = (parts[4], parts[5]) if sw is not None else (None, None)
            if X_val.shape[0] < 2:
                raise ValueError("The validation set is too small. Increase "
                                 "'validation_fraction' or the size of your dataset.")
            X_val_dev = _to_device(X_val, xp)
            self._best_coefs = self._best_intercepts = None
            self._best_run_score = -np.inf
        n_samples = X.shape[0]
        if self.batch_size != "auto" and self.batch_size > n_samples:
            warn("Got `batch_size` less than 1 or larger than sample size. It "
                 "is going to be clipped")
        batch_size = self._batch_size(n_samples)

        X_dev = _to_device(X.tocsr() if sp.issparse(X) else X, xp)
        Y_dev = xp.asarray(self._targets(y_idx, X.dtype))
        sw_dev = None if sw is None else xp.asarray(sw)
        device_arrays = xp is not np
        # on a device every update is in place (a CUDA graph replays the step on the same
        # memory): the parameters and Adam's state are copies made there
        coefs = [xp.asarray(c).copy() for c in self.coefs_]
        intercepts = [xp.asarray(b).copy() for b in self.intercepts_]
        # Adam moments of the hidden layers and of the output layer, kept apart: "ngd" moves
        # the output layer by Adam only on batches that do not identify it (own step count)
        if incremental and self._adam is not None:
            adam = tuple(state.to(lambda a: xp.asarray(a).copy()) for state in self._adam)
        else:
            adam = (AdamState.zeros_like(coefs[:-1] + intercepts[:-1], xp),
                    AdamState.zeros_like(coefs[-1:] + intercepts[-1:], xp))
        if device_arrays:  # the step counts live there too
            for state in adam:
                state.t = xp.full((), state.t, dtype=np.float64)
            batches = DeviceBatches(
                xp, X_dev, Y_dev, sw_dev,
                lambda Xb, Yb, swb, S, newton, rest, step_xp, graph: self._batch_step(
                    Xb, Yb, swb, S, coefs, intercepts, adam, step_xp, newton, rest,
                    on_device=graph))
        sample_idx = np.arange(n_samples)
        n_classes, n_basis = len(self.classes_), coefs[-1].shape[0]

        try:
            self.n_iter_ = 0
            for _ in range(self.max_iter):
                if self.shuffle:
                    # in place: the permutation sklearn.utils.shuffle (MLPClassifier's) makes
                    # from the same draws, without its input checks (which cost twice the
                    # shuffle itself, a noticeable share of a small epoch)
                    rng.shuffle(sample_idx)
                accumulated = 0.0
                if device_arrays:
                    batches.start_epoch(sample_idx)
                for batch in gen_batches(n_samples, batch_size):
                    idx = sample_idx[batch] if self.shuffle else batch
                    # the batch's weight and whether it identifies the output layer come from
                    # the host copies: nothing is read back from a device
                    S = float(batch.stop - batch.start) if sw is None else float(sw[idx].sum())
                    if not S > 0:
                        continue
                    newton = self.solver == "ngd" and identifies_output_layer(
                        y_idx[idx], None if sw is None else sw[idx], n_classes, n_basis)
                    rest = n_samples / (batch.stop - batch.start) - 1.0
                    if device_arrays:
                        batches(batch, newton, rest)
                        continue
                    Xb, Yb = _take(X_dev, idx), _take(Y_dev, idx)
                    swb = None if sw_dev is None else _take(sw_dev, idx)
                    loss = self._batch_step(Xb, Yb, swb, S, coefs, intercepts, adam, xp,
                                            newton, rest)
                    accumulated += loss * (batch.stop - batch.start)
                if device_arrays:
                    accumulated = batches.epoch_loss()
                self.n_iter_ += 1
                self.t_ += n_samples
                self.loss_ = accumulated / n_samples
                self.loss_curve_.append(self.loss_)
                if self.verbose:
                    print(f"Iteration {self.n_iter_}, loss = {self.loss_:.8f}")
                if early:
                    self._track_validation(X_val_dev, y_val, sw_val, coefs, intercepts, backend)
                else:
                    self._track_loss()
                if self._no_improvement_count > self.n_iter_no_change:
                    if self.verbose:
                        what = ("Validation score did not improve" if early
                                else "Training loss did not improve")
                        print(f"{what} more than tol={self.tol:f} for "
                              f"{self.n_iter_no_change} consecutive epochs. Stopping.")
                    break
                if incremental:
                    break
                if self.n_iter_ == self.max_iter:
                    warn(
                        f"{type(self).__name__}: maximum iterations ({self.max_iter}) reached "
                        "and the optimization hasn't converged yet.",
                        ConvergenceWarning,
                    )
        except KeyboardInterrupt:
            warn(
                f"{type(self).__name__}: training interrupted by the user after "
                f"{self.n_iter_} complete epochs; the model trained so far is kept.",
                UserWarning,
            )
        if early:
            if self._best_coefs is not None:  # restore the weights of the best epoch
                coefs, intercepts = self._best_coefs, self._best_intercepts
            del self._best_coefs, self._best_intercepts, self._best_run_score
        self.coefs_ = [backend.asnumpy(c).copy() for c in coefs]
        self.intercepts_ = [backend.asnumpy(b).copy() for b in intercepts]
        self._adam = tuple(state.to(backend.asnumpy) for state in adam)

    def _batch_step(self, Xb, Yb, swb, S, coefs, intercepts, adam, xp, newton: bool,
                    rest: float = 0.0, on_device: bool = False):
        """Update the parameters (in place in the lists) on one minibatch; return its loss.

        ``newton`` False (solver ``"adam"``, or a batch that does not identify the output
        layer, :func:`identifies_output_layer`): one Adam step on all layers; the loss is
        taken before it (as in MLPClassifier). True: the Newton phase on the output layer
        for the batch's basis, then one Adam step on the hidden layers at the fitted output
        layer, both from one forward pass; the loss is taken between the two (after the
        Newton phase, before the hidden layers move).

        ``rest``: the rest of the training data in batches (``n / b - 1``). A minibatch's
        optimum is not the data's: the Newton phase adds the proximal term
        ``rest * c / 2 * ||(W, b) - (W_0, b_0)||^2`` (``c`` the batch Hessian's mean
        eigenvalue, :func:`newton_output_layer`), an isotropic quadratic model of the other
        batches' objective around the current layer, which keeps the output layer near the
        current one when the batch is a small part of the data (no proximal term with one
        batch).

        ``on_device``: nothing is read back (the loss is a 0-d array), so that the step can
        be replayed as a CUDA graph (:mod:`exactclf.ngd._device`).
        """
        acts = forward_hidden(Xb, coefs, intercepts, self.activation, xp)
        if not newton:
            Z = output_logits(acts[-1], coefs[-1], intercepts[-1], xp)
            loss = network_loss(Z, Yb, swb, S, coefs, self.alpha, xp, on_device)
            self._adam_step(acts, logit_gradient(Z, Yb, swb, xp), S, coefs, intercepts, adam,
                            xp, output=True)
            return loss
        penalty_rest = sum((W * W).sum() for W in coefs[:-1])
        res = newton_output_layer(
            acts[-1], Yb, swb, S, coefs[-1], intercepts[-1], self.alpha, xp,
            n_steps=self.newton_steps, cg_iter=self.cg_iter, armijo_alpha=self.armijo_alpha,
            armijo_rho=self.armijo_rho, ftol=self.newton_tol, proximal=rest,
            penalty_rest=penalty_rest if on_device else float(penalty_rest),  # one read-back
            on_device=on_device,
        )
        coefs[-1][...], intercepts[-1][...] = res.W, res.b  # in place: see _train
        if len(coefs) > 1:
            D = res.probabilities - Yb
            self._adam_step(acts, D if swb is None else D * swb[:, None], S, coefs,
                            intercepts, adam, xp, output=False)
        return res.loss

    def _adam_step(self, acts, D, S, coefs, intercepts, adam, xp, output: bool):
        """One Adam step on the hidden layers, and on the output layer too if ``output``
        (``D``: gradient of the weighted loss sum in the logits)."""
        g_W, g_b = backprop(acts, coefs, D, S, self.alpha, self.activation, xp, output=output)
        hyper = (self.learning_rate_init, self.beta_1, self.beta_2, self.epsilon, xp)
        adam_update(coefs[:-1] + intercepts[:-1], g_W[:-1] + g_b[:-1], adam[0], *hyper)
        if output:
            adam_update(coefs[-1:] + intercepts[-1:], g_W[-1:] + g_b[-1:], adam[1], *hyper)

    def _track_loss(self) -> None:
        last = self.loss_curve_[-1]
        if last > self.best_loss_ - self.tol:
            self._no_improvement_count += 1
        else:
            self._no_improvement_count = 0
        self.best_loss_ = min(self.best_loss_, last)

    def _track_validation(self, X_val, y_val, sw_val, coefs, intercepts, backend) -> None:
        xp = backend.xp
        acts = forward_hidden(X_val, coefs, intercepts, self.activation, xp)
        Z = backend.asnumpy(output_logits(acts[-1], coefs[-1], intercepts[-1], xp))
        if not np.isfinite(Z).all():
            score = np.nan
        else:
            pred = (Z[:, 0] > 0).astype(np.intp) if Z.shape[1] == 1 else Z.argmax(axis=1)
            score = accuracy_score(y_val, pred, sample_weight=sw_val)
        self.validation_scores_.append(score)
        if self.verbose:
            print(f"Validation score: {score:f}")
        if score < self.best_validation_score_ + self.tol:
            self._no_improvement_count += 1
        else:
            self._no_improvement_count = 0
        if score > self.best_validation_score_:
            self.best_validation_score_ = score
        if self._best_coefs is None or score > self._best_run_score:  # best of this call
            self._best_run_score = score
            self._best_coefs = [c.copy() for c in coefs]
            self._best_intercepts = [b.copy() for b in intercepts]

    # -- prediction ------------------------------------------------------------------------
    def _logits(self, X) -> np.ndarray:
        acts = forward_hidden(X, self.coefs_, self.intercepts_, self.activation, np)
        return output_logits(acts[-1], self.coefs_[-1], self.intercepts_[-1])


def _to_device(X, xp):
    """``X`` as an array of ``xp``; SciPy sparse stays sparse on NumPy (densified for CuPy)."""
    if sp.issparse(X):
        return X if xp is np else xp.asarray(X.toarray())
    return xp.asarray(X)


def _take(A, idx):
    """Rows ``idx`` (slice or integer array) of a NumPy array or a SciPy sparse matrix."""
    if isinstance(idx, slice) or sp.issparse(A):
        return A[idx]
    # ``take`` gathers rows several times faster than NumPy's fancy indexing ``A[idx]``
    return np.take(A, idx, axis=0)
