"""NGDClassifier: derivatives, the Newton phase's optimum, the Adam baseline, sklearn plumbing."""

import operator
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import special
from sklearn.datasets import load_iris, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

from exactclf._backend import Backend, gpu_available
from exactclf.ngd import NGDClassifier, _ngd, make_peaks
from exactclf.ngd._mlp import (
    _OutputLayer,
    backprop,
    conjugate_gradient,
    cross_entropy,
    forward_hidden,
    glorot_uniform_init,
    identifies_output_layer,
    log_probabilities,
    logit_gradient,
    network_loss,
    newton_output_layer,
    objective,
    output_gradient,
    output_hvp,
    output_logits,
    probabilities,
)

ACTIVATIONS = ["identity", "logistic", "tanh", "relu"]


def _problem(seed, n_outputs, activation="tanh", units=(3, 5, 4), n=23, weighted=True):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, units[0]))
    k = 2 if n_outputs == 1 else n_outputs
    y = rng.randint(0, k, size=n)
    Y = y[:, None].astype(float) if n_outputs == 1 else np.eye(k)[y]
    sw = rng.uniform(0.5, 2.0, size=n) if weighted else None
    S = float(n if sw is None else sw.sum())
    coefs, intercepts = glorot_uniform_init([*units, n_outputs], activation, rng)
    return X, Y, sw, S, coefs, intercepts


def _net_loss(X, Y, sw, S, coefs, intercepts, alpha, activation):
    acts = forward_hidden(X, coefs, intercepts, activation, np)
    return network_loss(output_logits(acts[-1], coefs[-1], intercepts[-1]), Y, sw, S, coefs,
                        alpha, np)


# -- derivatives ------------------------------------------------------------------------------
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("n_outputs", [1, 3])
def test_backprop_matches_finite_differences(activation, n_outputs):
    X, Y, sw, S, coefs, intercepts = _problem(0, n_outputs, activation)
    alpha = 0.3
    acts = forward_hidden(X, coefs, intercepts, activation, np)
    D = logit_gradient(output_logits(acts[-1], coefs[-1], intercepts[-1]), Y, sw, np)
    g_W, g_b = backprop(acts, coefs, D, S, alpha, activation, np)
    h = 1e-6
    for grads, params in ((g_W, coefs), (g_b, intercepts)):
        for g, p in zip(grads, params, strict=True):
            num = np.zeros_like(p)
            for idx in np.ndindex(p.shape):
                old = p[idx]
                p[idx] = old + h
                f_plus = _net_loss(X, Y, sw, S, coefs, intercepts, alpha, activation)
                p[idx] = old - h
                f_minus = _net_loss(X, Y, sw, S, coefs, intercepts, alpha, activation)
                p[idx] = old
                num[idx] = (f_plus - f_minus) / (2 * h)
            np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-8)


def test_backprop_of_trailing_layers_only():
    X, Y, sw, S, coefs, intercepts = _problem(1, 3)
    acts = forward_hidden(X, coefs, intercepts, "tanh", np)
    D = logit_gradient(output_logits(acts[-1], coefs[-1], intercepts[-1]), Y, sw, np)
    full = backprop(acts, coefs, D, S, 0.1, "tanh", np)
    part = backprop(acts, coefs, D, S, 0.1, "tanh", np, n_layers=2)
    assert part[0][0] is None and part[1][0] is None
    for a, b in zip(full[0][1:] + full[1][1:], part[0][1:] + part[1][1:], strict=True):
        np.testing.assert_array_equal(a, b)
    hidden = backprop(acts, coefs, D, S, 0.1, "tanh", np, output=False)  # NGD's Adam step
    assert hidden[0][-1] is None and hidden[1][-1] is None
    for a, b in zip(full[0][:-1] + full[1][:-1], hidden[0][:-1] + hidden[1][:-1], strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n_outputs", [1, 2, 4])
@pytest.mark.parametrize("weighted", [False, True])
def test_output_gradient_and_hvp_match_finite_differences(n_outputs, weighted):
    rng = np.random.RandomState(3)
    Phi = rng.normal(size=(31, 5))
    _, Y, sw, S, _, _ = _problem(3, n_outputs, n=31, weighted=weighted)
    W, b = rng.normal(size=(5, n_outputs)), rng.normal(size=n_outputs)
    alpha, h = 0.7, 1e-6
    g_W, g_b = output_gradient(Phi, Y, sw, S, W, b, alpha, np)
    num_W = np.zeros_like(W)
    for idx in np.ndindex(W.shape):
        E = np.zeros_like(W)
        E[idx] = h
        num_W[idx] = (objective(Phi, Y, sw, S, W + E, b, alpha, np)
                      - objective(Phi, Y, sw, S, W - E, b, alpha, np)) / (2 * h)
    num_b = np.array([(objective(Phi, Y, sw, S, W, b + h * e, alpha, np)
                       - objective(Phi, Y, sw, S, W, b - h * e, alpha, np)) / (2 * h)
                      for e in np.eye(n_outputs)])
    np.testing.assert_allclose(g_W, num_W, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(g_b, num_b, rtol=1e-6, atol=1e-9)
    # Hessian-vector product against differences of the analytic gradient
    P = probabilities(output_logits(Phi, W, b), np)
    for _ in range(3):
        V_W, V_b = rng.normal(size=W.shape), rng.normal(size=b.shape)
        H_W, H_b = output_hvp(Phi, P, sw, S, V_W, V_b, alpha, np)
        gp = output_gradient(Phi, Y, sw, S, W + h * V_W, b + h * V_b, alpha, np)
        gm = output_gradient(Phi, Y, sw, S, W - h * V_W, b - h * V_b, alpha, np)
        np.testing.assert_allclose(H_W, (gp[0] - gm[0]) / (2 * h), rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(H_b, (gp[1] - gm[1]) / (2 * h), rtol=1e-5, atol=1e-8)


def test_conjugate_gradient_solves_spd_system_in_n_steps():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 6))
    A = A @ A.T + 0.1 * np.eye(6)
    r = rng.normal(size=(6, 1))
    d_W = conjugate_gradient(lambda v: A @ v, r, 12, np)  # past convergence: steps of 0
    np.testing.assert_allclose(A @ d_W, r, atol=1e-8)
    # fewer iterations: still a descent direction for 0.5 d'Ad - r'd
    d_W = conjugate_gradient(lambda v: A @ v, r, 2, np)
    assert 0.5 * (d_W.T @ A @ d_W).item() - (r.T @ d_W).item() < 0


# -- numerical safety ---------------------------------------------------------------------------
def test_cross_entropy_and_probabilities_are_safe_for_huge_logits():
    Z = np.array([[1e300, -1e300, 0.0], [-5000.0, 5000.0, 1.0], [0.0, 0.0, 0.0]])
    Y = np.eye(3)[[0, 0, 2]]
    ce = cross_entropy(Z, Y, np)
    assert np.isfinite(ce).all() and ce[0] == 0.0 and ce[1] == 10000.0
    P = probabilities(Z, np)
    assert np.isfinite(P).all() and np.allclose(P.sum(axis=1), 1.0)
    z = np.array([[-1e4], [0.0], [1e4]])
    assert np.isfinite(cross_entropy(z, np.ones((3, 1)), np)).all()
    assert np.isfinite(log_probabilities(z, np)).all()
    np.testing.assert_allclose(probabilities(z, np)[:, 0], [0.0, 0.5, 1.0])


@pytest.mark.parametrize("n_classes", [3, 16, 17, 40])
def test_softmax_helpers_match_scipy(n_classes):
    """Both row-maximum code paths (column loop up to 16 columns, ``max`` beyond)."""
    rng = np.random.RandomState(n_classes)
    Z = rng.normal(scale=30.0, size=(50, n_classes))
    Y = np.eye(n_classes)[rng.randint(0, n_classes, 50)]
    np.testing.assert_allclose(probabilities(Z, np), special.softmax(Z, axis=1), rtol=1e-12,
                               atol=1e-300)
    np.testing.assert_allclose(log_probabilities(Z, np), special.log_softmax(Z, axis=1),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cross_entropy(Z, Y, np),
                               special.logsumexp(Z, axis=1) - (Y * Z).sum(axis=1), rtol=1e-12)


def test_logistic_helpers_match_scipy_in_both_tails():
    z = np.concatenate([-np.logspace(-3, 3, 40), [0.0], np.logspace(-3, 3, 40)])[:, None]
    np.testing.assert_allclose(probabilities(z, np), special.expit(z), rtol=1e-13, atol=0)
    np.testing.assert_allclose(log_probabilities(z, np),
                               np.hstack([special.log_expit(-z), special.log_expit(z)]),
                               rtol=1e-13, atol=1e-300)
    # the loss is log-normalizer minus target logit: accurate in absolute terms
    ones = np.ones_like(z)
    np.testing.assert_allclose(cross_entropy(z, ones, np), -special.log_expit(z[:, 0]),
                               rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("solver", ["ngd", "adam"])
def test_separable_data_without_penalty_gives_no_nan(solver):
    rng = np.random.RandomState(0)
    X = np.vstack([rng.normal(-5, 0.1, size=(20, 2)), rng.normal(5, 0.1, size=(20, 2))])
    y = np.repeat([0, 1], 20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = NGDClassifier((4,), solver=solver, alpha=0.0, newton_steps=20, cg_iter=10,
                            learning_rate_init=0.1, max_iter=50, random_state=0).fit(X * 100, y)
    assert all(np.isfinite(c).all() for c in clf.coefs_ + clf.intercepts_)
    assert np.isfinite(clf.loss_curve_).all()
    assert np.isfinite(clf.predict_log_proba(X * 100)).all()
    assert clf.score(X * 100, y) == 1.0


@pytest.mark.parametrize("solver", ["ngd", "adam"])
def test_separable_multiclass_large_weights_give_no_nan(solver):
    """Softmax output, no penalty, well separated clusters far from the origin: the logits
    grow without bound, the probabilities saturate, nothing overflows."""
    rng = np.random.RandomState(1)
    centres = 1e3 * np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    X = np.vstack([c + rng.normal(scale=1.0, size=(15, 2)) for c in centres])
    y = np.repeat(np.arange(4), 15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = NGDClassifier((6,), activation="relu", solver=solver, alpha=0.0, batch_size=60,
                            newton_steps=20, cg_iter=10, learning_rate_init=0.1, max_iter=40,
                            random_state=0).fit(X, y)
    assert all(np.isfinite(c).all() for c in clf.coefs_ + clf.intercepts_)
    assert np.isfinite(clf.loss_curve_).all()
    P = clf.predict_proba(X)
    assert np.isfinite(P).all() and np.allclose(P.sum(axis=1), 1.0)
    assert np.isfinite(clf.predict_log_proba(X)).all()
    assert np.abs(clf.coefs_[-1]).max() > 1.0  # the weights did grow
    # and some epoch fit the clusters to a loss of about 0. (Not the returned model's score:
    # it is the last epoch's, as MLPClassifier's, and at a learning rate of 0.1 on inputs of
    # 1e3 the hidden layers' last Adam step can move it off the clusters' split; with numpy
    # 2.4.6 "ngd" ends with 45 of 60 points right after a loss of 4e-12 at its 19th epoch,
    # and 3 of 10 seeds do so.)
    assert min(clf.loss_curve_) < 1e-6


# -- the Newton phase reaches the convex optimum of the last layer -----------------------------
def _lr_objective(lr, Phi, Y, sw, S, alpha):
    W = lr.coef_.T
    b = lr.intercept_
    return objective(Phi, Y, sw, S, W, b, alpha, np)


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("weighted", [False, True])
def test_newton_phase_reaches_logistic_regression_optimum(n_classes, weighted):
    rng = np.random.RandomState(7)
    X, y = make_classification(300, 6, n_informative=4, n_classes=n_classes, random_state=0)
    sw = rng.uniform(0.2, 3.0, size=len(y)) if weighted else None
    n_out = 1 if n_classes == 2 else n_classes
    coefs, intercepts = glorot_uniform_init([6, 10, 7, n_out], "tanh", rng)
    Phi = forward_hidden(X, coefs, intercepts, "tanh", np)[-1]  # frozen hidden features
    Y = y[:, None].astype(float) if n_classes == 2 else np.eye(n_classes)[y]
    S = float(len(y) if sw is None else sw.sum())
    alpha = 0.5
    res = newton_output_layer(Phi, Y, sw, S, coefs[-1], intercepts[-1], alpha, np,
                              n_steps=50, cg_iter=50)
    assert np.all(np.diff(res.losses) <= 0)  # monotone (Armijo)
    # same objective: sum_i s_i CE_i + alpha/2 ||W||^2  <=>  C = 1 / alpha, intercept free
    lr = LogisticRegression(C=1 / alpha, tol=1e-12, max_iter=10000)
    lr.fit(Phi, y, sample_weight=sw)
    f_lr = _lr_objective(lr, Phi, Y, sw, S, alpha)
    assert res.loss <= f_lr + 1e-10
    assert res.loss == pytest.approx(f_lr, rel=1e-8)
    P = probabilities(output_logits(Phi, res.W, res.b), np)
    P_lr = lr.predict_proba(Phi)
    np.testing.assert_allclose(P if n_out > 1 else np.hstack([1 - P, P]), P_lr, atol=1e-5)
    g_W, g_b = output_gradient(Phi, Y, sw, S, res.W, res.b, alpha, np)
    assert max(np.abs(g_W).max(), np.abs(g_b).max()) < 1e-7
    # the default truncated phase (5 steps x 3 CG) gets most of the way
    short = newton_output_layer(Phi, Y, sw, S, coefs[-1], intercepts[-1], alpha, np,
                                n_steps=5, cg_iter=3)
    f0 = short.losses[0]
    assert (short.loss - f_lr) < 0.05 * (f0 - f_lr)
    # repeated truncated phases (consecutive iterations on a fixed basis) reach the optimum
    W, b = short.W, short.b
    for _ in range(30):
        again = newton_output_layer(Phi, Y, sw, S, W, b, alpha, np, n_steps=5, cg_iter=3)
        W, b = again.W, again.b
    assert again.loss == pytest.approx(f_lr, rel=1e-8)


def test_linear_network_trains_to_logistic_regression():
    """No hidden layer: every NGD batch solves the (convex) problem itself."""
    X, y = load_iris(return_X_y=True)
    alpha = 1.0
    clf = NGDClassifier((), solver="ngd", alpha=alpha, batch_size=150, newton_steps=30,
                        cg_iter=30, newton_tol=0.0, max_iter=3, shuffle=False, random_state=0,
                        device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    lr = LogisticRegression(C=1 / alpha, tol=1e-12, max_iter=10000).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), lr.predict_proba(X), atol=1e-6)


# -- solver="adam" is MLPClassifier --------------------------------------------------------------
@pytest.mark.parametrize(
    "params",
    [
        dict(hidden_layer_sizes=(10, 7), activation="tanh", batch_size=32),
        dict(hidden_layer_sizes=(12,), activation="relu", alpha=1e-2),
        dict(hidden_layer_sizes=(6, 5), activation="logistic", batch_size=50),
        dict(hidden_layer_sizes=(8,), activation="tanh", early_stopping=True,
             validation_fraction=0.2, n_iter_no_change=3),
    ],
)
@pytest.mark.parametrize("binary", [False, True])
def test_adam_solver_reproduces_mlpclassifier(params, binary):
    """Same initialization, minibatches, updates, stopping: the same iterates (on the CPU,
    MLPClassifier's arithmetic). Early stopping with three classes holds out the same
    validation split: stratified for binary targets only, MLPClassifier's rule."""
    X, y = load_iris(return_X_y=True)
    if binary:
        y = np.where(y == 1, "versicolor", "other")
    common = dict(random_state=3, max_iter=40, learning_rate_init=0.01, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = NGDClassifier(solver="adam", device="cpu", **common).fit(X, y)
        mlp = MLPClassifier(solver="adam", **common).fit(X, y)
    assert ours.n_iter_ == mlp.n_iter_ and ours.t_ == mlp.t_
    np.testing.assert_allclose(ours.loss_curve_, mlp.loss_curve_, rtol=1e-9, atol=1e-12)
    for a, b in zip(ours.coefs_ + ours.intercepts_, mlp.coefs_ + mlp.intercepts_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)
    assert ours.out_activation_ == mlp.out_activation_
    assert ours.n_outputs_ == mlp.n_outputs_ and ours.n_layers_ == mlp.n_layers_
    if params.get("early_stopping"):
        np.testing.assert_allclose(ours.validation_scores_, mlp.validation_scores_)
        assert ours.best_validation_score_ == mlp.best_validation_score_
        assert ours.best_loss_ is None
    else:
        assert ours.validation_scores_ is None
        assert ours.best_loss_ == pytest.approx(mlp.best_loss_, rel=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), mlp.predict_proba(X), atol=1e-9)
    np.testing.assert_array_equal(ours.predict(X), mlp.predict(X))


def test_adam_solver_matches_mlpclassifier_partial_fit_and_sample_weight():
    X, y = load_iris(return_X_y=True)
    sw = np.random.RandomState(0).uniform(0.5, 2, size=len(y))
    ours = NGDClassifier((9,), activation="tanh", solver="adam", random_state=1, batch_size=40,
                         device="cpu")
    mlp = MLPClassifier((9,), activation="tanh", solver="adam", random_state=1, batch_size=40)
    for _ in range(5):
        ours.partial_fit(X, y, sample_weight=sw, classes=[0, 1, 2])
        mlp.partial_fit(X, y, sample_weight=sw, classes=[0, 1, 2])
    np.testing.assert_allclose(ours.loss_curve_, mlp.loss_curve_, rtol=1e-9)
    assert ours.n_iter_ == mlp.n_iter_ == 1


# -- NGD trains -----------------------------------------------------------------------------------
def test_ngd_fits_peaks_faster_than_adam():
    X, y = make_peaks(600, random_state=0)
    kw = dict(hidden_layer_sizes=(12, 12, 6), activation="tanh", batch_size=600,
              learning_rate_init=0.01, max_iter=60, random_state=0, n_iter_no_change=np.inf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ngd = NGDClassifier(solver="ngd", **kw).fit(X, y)
        adam = NGDClassifier(solver="adam", **kw).fit(X, y)
    assert ngd.loss_curve_[-1] < 0.8 * adam.loss_curve_[-1]
    assert ngd.score(X, y) > adam.score(X, y)


def test_loss_curve_and_stopping_rule():
    X, y = load_iris(return_X_y=True)
    clf = NGDClassifier((8,), activation="tanh", random_state=0, tol=1e-2,
                        n_iter_no_change=2).fit(X, y)
    assert len(clf.loss_curve_) == clf.n_iter_ < clf.max_iter
    assert clf.best_loss_ == min(clf.loss_curve_) and clf.loss_ == clf.loss_curve_[-1]
    # MLPClassifier's rule: stop at the first epoch that ends a run of more than
    # n_iter_no_change epochs none of which beat the best loss so far by tol
    best, count, stop = np.inf, 0, None
    for epoch, loss in enumerate(clf.loss_curve_, start=1):
        count = count + 1 if loss > best - 1e-2 else 0
        best = min(best, loss)
        if count > 2:
            stop = epoch
            break
    assert stop == clf.n_iter_


def test_convergence_warning_at_max_iter():
    X, y = load_iris(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="maximum iterations"):
        NGDClassifier((5,), max_iter=2, random_state=0).fit(X, y)


def test_random_state_reproducible():
    X, y = load_iris(return_X_y=True)
    kw = dict(hidden_layer_sizes=(7,), max_iter=15, batch_size=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = NGDClassifier(random_state=5, **kw).fit(X, y)
        b = NGDClassifier(random_state=5, **kw).fit(X, y)
        c = NGDClassifier(random_state=6, **kw).fit(X, y)
    for u, v in zip(a.coefs_, b.coefs_, strict=True):
        np.testing.assert_array_equal(u, v)
    assert a.loss_curve_ == b.loss_curve_ != c.loss_curve_


def test_same_initial_network_as_mlpclassifier():
    X, y = load_iris(return_X_y=True)
    ours = NGDClassifier((6, 4), activation="logistic", max_iter=1, random_state=2)
    ours._initialize([4, 6, 4, 3], np.random.RandomState(2), np.float64)
    mlp = MLPClassifier((6, 4), activation="logistic", max_iter=1, random_state=2)
    mlp._random_state = np.random.RandomState(2)
    mlp._label_binarizer = type("LB", (), {"y_type_": "multiclass"})()
    mlp._initialize(np.zeros((1, 3)), [4, 6, 4, 3], np.float64)
    for a, b in zip(ours.coefs_ + ours.intercepts_, mlp.coefs_ + mlp.intercepts_, strict=True):
        np.testing.assert_array_equal(a, b)


def test_early_stopping_keeps_best_weights():
    X, y = make_peaks(400, random_state=1)
    clf = NGDClassifier((8, 4), activation="tanh", early_stopping=True, random_state=0,
                        validation_fraction=0.25, n_iter_no_change=5, max_iter=200)
    clf.fit(X, y)
    assert len(clf.validation_scores_) == clf.n_iter_
    assert clf.best_validation_score_ == max(clf.validation_scores_)
    assert clf.best_loss_ is None
    with pytest.raises(ValueError, match="early_stopping"):
        clf.partial_fit(X, y)


def test_partial_fit_and_warm_start():
    X, y = load_iris(return_X_y=True)
    clf = NGDClassifier((6,), random_state=0, batch_size=50)
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, y)
    clf.partial_fit(X[:60], y[:60], classes=np.unique(y))
    for _ in range(3):
        clf.partial_fit(X, y)
    assert clf.n_iter_ == 1 and len(clf.loss_curve_) == 4 and clf.t_ == 60 + 3 * 150
    with pytest.raises(ValueError, match="classes not in"):
        clf.partial_fit(X, y + 10)
    warm = NGDClassifier((6,), random_state=0, warm_start=True, max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warm.fit(X, y)
        first = [c.copy() for c in warm.coefs_]
        warm.fit(X, y)
    assert len(warm.loss_curve_) == 6
    assert any(not np.array_equal(a, b) for a, b in zip(first, warm.coefs_, strict=True))
    with pytest.raises(ValueError, match="same classes"):
        warm.fit(X[y < 2], y[y < 2])


@pytest.mark.parametrize("solver", ["ngd", "adam"])
@pytest.mark.parametrize("batch_size", [150, 40])
def test_partial_fit_epochs_equal_fit(solver, batch_size):
    """Without shuffling, k partial_fit calls make exactly the updates of fit(max_iter=k)
    (the benchmark relies on it: it evaluates the model after every partial_fit)."""
    X, y = load_iris(return_X_y=True)
    kw = dict(hidden_layer_sizes=(6, 5), activation="tanh", solver=solver,
              batch_size=batch_size, shuffle=False, learning_rate_init=0.01, random_state=4)
    inc = NGDClassifier(**kw)
    for _ in range(4):
        inc.partial_fit(X, y, classes=[0, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        full = NGDClassifier(max_iter=4, n_iter_no_change=np.inf, **kw).fit(X, y)
    np.testing.assert_allclose(inc.loss_curve_, full.loss_curve_, rtol=1e-12)
    for a, b in zip(inc.coefs_ + inc.intercepts_, full.coefs_ + full.intercepts_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert inc.t_ == full.t_ == 4 * 150
    np.testing.assert_allclose(inc.predict_proba(X), full.predict_proba(X), atol=1e-12)


def test_warm_start_adam_matches_mlpclassifier():
    """Second fit continues from the weights with fresh Adam moments, like MLPClassifier."""
    X, y = load_iris(return_X_y=True)
    kw = dict(hidden_layer_sizes=(7,), activation="tanh", solver="adam", warm_start=True,
              max_iter=5, batch_size=50, learning_rate_init=0.01, random_state=2)
    ours, mlp = NGDClassifier(device="cpu", **kw), MLPClassifier(**kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for _ in range(2):
            ours.fit(X, y)
            mlp.fit(X, y)
    assert len(ours.loss_curve_) == len(mlp.loss_curve_) == 10
    np.testing.assert_allclose(ours.loss_curve_, mlp.loss_curve_, rtol=1e-9)
    for a, b in zip(ours.coefs_ + ours.intercepts_, mlp.coefs_ + mlp.intercepts_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)


def test_early_stopping_returns_the_best_epochs_weights():
    """The run cut at the best epoch ends with the weights the early-stopped run returns."""
    X, y = make_peaks(400, random_state=3)
    kw = dict(hidden_layer_sizes=(8, 4), activation="tanh", early_stopping=True,
              validation_fraction=0.25, learning_rate_init=0.01, random_state=0)
    stopped = NGDClassifier(n_iter_no_change=4, max_iter=300, **kw).fit(X, y)
    scores = stopped.validation_scores_
    best = int(np.argmax(scores))  # first epoch with the best score
    assert best + 1 < stopped.n_iter_ < 300  # it did stop early, after its best epoch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cut = NGDClassifier(n_iter_no_change=np.inf, max_iter=best + 1, **kw).fit(X, y)
    assert cut.validation_scores_ == scores[: best + 1]
    for a, b in zip(stopped.coefs_ + stopped.intercepts_, cut.coefs_ + cut.intercepts_,
                    strict=True):
        np.testing.assert_array_equal(a, b)


def test_multiclass_probabilities_are_consistent():
    X, y = load_iris(return_X_y=True)
    clf = NGDClassifier((6,), activation="tanh", random_state=0, max_iter=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (150, 3) and np.allclose(P.sum(axis=1), 1.0) and (P >= 0).all()
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[P.argmax(axis=1)])
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), P, rtol=1e-12)
    assert clf.score(X, y) > 0.9


def test_keyboard_interrupt_returns_model_so_far(monkeypatch):
    X, y = load_iris(return_X_y=True)
    calls = {"n": 0}
    real = _ngd.adam_update

    def interrupting(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 7:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(_ngd, "adam_update", interrupting)
    clf = NGDClassifier((5,), batch_size=50, random_state=0, max_iter=100)
    with pytest.warns(UserWarning, match="interrupted"):
        clf.fit(X, y)
    assert clf.n_iter_ == 2 and len(clf.loss_curve_) == 2
    assert clf.predict(X).shape == (150,)


class _DeviceArray:
    """Stand-in for a CuPy array: a NumPy array behind a wall.

    Like CuPy it refuses implicit conversion to NumPy (``np.asarray``, NumPy functions and
    ufuncs) and arithmetic with NumPy arrays; reductions give 0-d device arrays; ``get()``
    copies to the host. Code that works on it keeps host and device data apart as the GPU
    path must.
    """

    __array_ufunc__ = None  # ``ndarray op device`` -> the reflected operation below

    def __init__(self, a):
        self.a = a

    def __array__(self, *args, **kwargs):
        raise TypeError("implicit conversion of a device array to a NumPy array")

    #: False while a (fake) CUDA graph is captured or replayed: nothing may be read back
    reads_allowed = True

    def _read(self):
        if not _DeviceArray.reads_allowed:
            raise RuntimeError("a device array read back during a graph capture")
        return self.a

    def get(self):
        return self._read().copy()

    def __getattr__(self, name):  # shape, dtype, T, sum, max, mean, astype, copy, ...
        if name.startswith("__"):  # no __array_interface__ & co: NumPy must not see inside
            raise AttributeError(name)
        attr = getattr(self.a, name)
        if not callable(attr):
            return _to_dev(attr)
        return lambda *args, **kwargs: _to_dev(attr(*_from_dev(args), **kwargs))

    def __getitem__(self, key):
        return _to_dev(self.a[_from_dev(key)])

    def __setitem__(self, key, value):
        self.a[_from_dev(key)] = _from_dev(value)

    def __iadd__(self, other):
        self.a += _from_dev(other)
        return self

    def __imul__(self, other):
        self.a *= _from_dev(other)
        return self

    def __abs__(self):
        return _DeviceArray(abs(self.a))

    def __invert__(self):
        return _DeviceArray(~self.a)

    def __float__(self):
        return float(self._read())

    def __int__(self):
        return int(self._read())

    def __bool__(self):
        return bool(self._read())

    def __neg__(self):
        return _DeviceArray(-self.a)


for _name in ("add", "sub", "mul", "truediv", "matmul", "pow", "and", "or"):
    _op = getattr(operator, _name + "_" if _name in ("and", "or") else _name)
    setattr(_DeviceArray, f"__{_name}__",
            lambda self, other, op=_op: _to_dev(op(self.a, _from_dev(other))))
    setattr(_DeviceArray, f"__r{_name}__",
            lambda self, other, op=_op: _to_dev(op(_from_dev(other), self.a)))
for _name in ("gt", "ge", "lt", "le"):
    _op = getattr(operator, _name)
    setattr(_DeviceArray, f"__{_name}__",
            lambda self, other, op=_op: _to_dev(op(self.a, _from_dev(other))))


def _to_dev(x):
    if isinstance(x, np.ndarray | np.generic):
        return _DeviceArray(np.asarray(x))
    return x


def _from_dev(x):
    if isinstance(x, _DeviceArray):
        return x.a
    if isinstance(x, np.ndarray):
        raise TypeError("a NumPy array mixed with device arrays")
    if isinstance(x, list | tuple):
        return type(x)(_from_dev(v) for v in x)
    return x


class _DeviceNamespace:
    """The array namespace of :class:`_DeviceArray` (NumPy's functions behind the wall)."""

    @staticmethod
    def asarray(a, dtype=None):  # the explicit host -> device transfer
        return a if isinstance(a, _DeviceArray) else _DeviceArray(np.array(a, dtype=dtype))

    def __getattr__(self, name):
        func = getattr(np, name)
        return lambda *args, **kwargs: _to_dev(func(
            *_from_dev(args), **{key: _from_dev(v) for key, v in kwargs.items()}))


def test_device_stand_in_refuses_host_mixing():
    """The stand-in catches what CuPy would reject (else the next test could not fail)."""
    xp = _DeviceNamespace()
    A = xp.asarray(np.ones((2, 2)))
    for bad in (lambda: np.asarray(A), lambda: np.exp(A), lambda: A + np.ones(2),
                lambda: np.ones(2) * A, lambda: xp.maximum(A, np.zeros(2))):
        with pytest.raises(TypeError):
            bad()
    assert isinstance(A.sum(), _DeviceArray) and float(A.sum()) == 4.0
    np.testing.assert_array_equal((2.0 * A - 1.0).get(), np.ones((2, 2)))


@pytest.mark.parametrize("case", ["dense", "sparse_weighted", "early_stopping", "binary"])
def test_device_path_on_stand_in_arrays_gives_the_cpu_model(monkeypatch, case):
    """The GPU code path (device transfers, batch indexing on the device, device-side
    reductions, early-stopping scoring) run on arrays that, like CuPy's, refuse to mix with
    NumPy: it must not touch them with NumPy, and it must give the CPU model."""
    X, y = load_iris(return_X_y=True)
    kw = dict(hidden_layer_sizes=(7,), max_iter=4, random_state=0, batch_size=64)
    fit_kw = {}
    if case == "sparse_weighted":
        X = sp.csr_matrix(np.where(X > 2.0, X, 0.0))
        fit_kw["sample_weight"] = np.random.RandomState(0).uniform(0.5, 2.0, len(y))
    elif case == "early_stopping":
        kw.update(early_stopping=True, validation_fraction=0.2, n_iter_no_change=2)
    elif case == "binary":
        y = (y == 1).astype(int)
        kw.update(batch_size=8, hidden_layer_sizes=(12,))  # batches too small for Newton
    more = case != "early_stopping"  # then a partial_fit continues on the device
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        X_host = X.toarray() if sp.issparse(X) else X  # the device densifies sparse input
        cpu = NGDClassifier(device="cpu", **kw).fit(X_host, y, **fit_kw)
        if more:
            cpu.partial_fit(X_host, y, **fit_kw)
        stand_in = Backend("gpu", _DeviceNamespace())
        monkeypatch.setattr(_ngd, "resolve_device", lambda device, *work: stand_in)
        dev = NGDClassifier(device="gpu", **kw).fit(X, y, **fit_kw)
        if more:
            dev.partial_fit(X, y, **fit_kw)
    assert dev.device_ == "gpu" and cpu.device_ == "cpu"
    assert all(type(a) is np.ndarray for a in dev.coefs_ + dev.intercepts_)
    np.testing.assert_allclose(dev.loss_curve_, cpu.loss_curve_, rtol=1e-12)
    for a, b in zip(cpu.coefs_ + cpu.intercepts_, dev.coefs_ + dev.intercepts_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def _iris_case(case, max_iter):
    """Iris for the device-path tests: ``(X, y, estimator kwargs, fit kwargs)`` of a case
    (``weighted``, ``adam``, ``binary``, ``float32...``, else the defaults)."""
    X, y = load_iris(return_X_y=True)
    kw = dict(hidden_layer_sizes=(7,), max_iter=max_iter, random_state=0, batch_size=64)
    fit_kw = {}
    if case == "weighted":
        fit_kw["sample_weight"] = np.random.RandomState(0).uniform(0.5, 2.0, len(y))
    elif case == "adam":
        kw["solver"] = "adam"
    elif case == "binary":
        y = (y == 1).astype(int)
    elif case.startswith("float32"):
        X = X.astype(np.float32)
    return X, y, kw, fit_kw


class _FakeCuda:
    """Stand-in for ``cupy.cuda``'s streams, pools and graphs: a "captured" graph replays
    the step's Python code, with device reads forbidden while capturing and replaying (as
    CUDA forbids them), and ``fail_capture`` makes every capture fail."""

    class runtime:  # noqa: N801 - the name of cupy.cuda's module
        streamCaptureModeRelaxed = 2

    def __init__(self, fail_capture=False):
        self.fail_capture = fail_capture
        self.captures = self.launches = 0
        self._stream = _FakeCuda.Stream(self)

    class Stream:
        def __init__(self, cuda=None, non_blocking=False):
            self.cuda = cuda

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def begin_capture(self, mode=None):
            if self.cuda.fail_capture:
                raise RuntimeError("cudaErrorStreamCaptureUnsupported")
            _DeviceArray.reads_allowed = False

        def end_capture(self):
            _DeviceArray.reads_allowed = True
            self.cuda.captures += 1
            return _FakeCuda.Graph(self.cuda)

    class Graph:
        """Its capture ran the step (the fake executes what CUDA would record), so its first
        launch does nothing; later ones run the step again (``run``: set by the test)."""

        def __init__(self, cuda):
            self.cuda, self.run, self.fresh = cuda, None, True

        def launch(self, stream=None):
            if self.fresh:
                self.fresh = False
                return
            self.cuda.launches += 1
            _DeviceArray.reads_allowed = False
            try:
                self.run()
            finally:
                _DeviceArray.reads_allowed = True

    class MemoryPool:
        def malloc(self, size):
            raise AssertionError("not called by the stand-in")

    @staticmethod
    def using_allocator(malloc):
        import contextlib
        return contextlib.nullcontext()

    def get_current_stream(self):
        return self._stream


class _GraphNamespace(_DeviceNamespace):
    def __init__(self, cuda):
        self.cuda = cuda


@pytest.fixture
def fake_graphs(monkeypatch):
    """``install(fail_capture=False, no_kernels=False)``: from then on ``device="gpu"`` fits on
    the stand-in arrays with a fake ``cupy.cuda`` (:class:`_FakeCuda`, whose graphs replay the
    step's code with every read-back forbidden; GraphSafe's kernels replaced by the stand-in's
    products, which fail to compile with ``no_kernels``); returns the fake."""
    from exactclf._backend import CPU
    from exactclf.ngd import _device

    def install(fail_capture=False, no_kernels=False):
        cuda = _FakeCuda(fail_capture=fail_capture)
        original = _device._Graphs.__call__

        def remember_run(self, key, run):  # a replay runs the step of the same batch shape
            if key in self.graphs and self.graphs[key].run is None:
                self.graphs[key].run = lambda: run(self.xp, True)
            original(self, key, run)

        class NoKernels:
            def __init__(self, xp):
                self._cupy = xp

            def __getattr__(self, name):
                return getattr(self._cupy, name)

            def prepare(self, dtype):
                if no_kernels:
                    raise RuntimeError("nvrtc: compilation failed")

        backend = Backend("gpu", _GraphNamespace(cuda))
        monkeypatch.setattr(_device._Graphs, "__call__", remember_run)
        monkeypatch.setattr(_device, "GraphSafe", NoKernels)
        monkeypatch.setattr(_ngd, "resolve_device",
                            lambda device, *work: backend if device == "gpu" else CPU)
        return cuda

    return install


def _assert_same_model(dev, cpu, rtol, atol):
    np.testing.assert_allclose(dev.loss_curve_, cpu.loss_curve_, rtol=rtol)
    for a, b in zip(cpu.coefs_ + cpu.intercepts_, dev.coefs_ + dev.intercepts_, strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", ["ngd", "weighted", "adam", "fail", "no_kernels",
                                  "float32_continued"])
def test_device_steps_replayed_as_graphs_give_the_cpu_model(fake_graphs, case):
    """On CuPy a batch step runs eagerly on its first batch shape, is captured as a CUDA graph
    on the second and replayed afterwards. With a fake ``cupy.cuda`` whose graphs replay the
    step's code with every read-back forbidden, the fit gives the CPU model: the step reads
    nothing back and keeps its state in place. A capture that fails, or product kernels that
    do not compile, warn once and the fit goes on without graphs, to the same model. Float32
    input, continued by ``partial_fit`` (Adam's state and step count back to the device),
    too."""
    X, y, kw, fit_kw = _iris_case(case, max_iter=4)
    cuda = fake_graphs(fail_capture=case == "fail", no_kernels=case == "no_kernels")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cpu = NGDClassifier(device="cpu", **kw).fit(X, y, **fit_kw)
        dev = NGDClassifier(device="gpu", **kw).fit(X, y, **fit_kw)
        if case == "float32_continued":
            for est in (cpu, dev):
                est.partial_fit(X, y).partial_fit(X, y)
    graph_warnings = [w for w in caught if "CUDA graph" in str(w.message)]
    if case == "float32_continued":
        assert not graph_warnings and dev.coefs_[0].dtype == np.float32
        assert dev._adam[0].t == cpu._adam[0].t == 3 * 4 + 2 * 3
    elif case in ("fail", "no_kernels"):
        assert len(graph_warnings) == 1 and cuda.captures == 0
    else:
        assert not graph_warnings
        # batches of 64, 64 and 22 samples, 4 epochs: each shape runs eagerly once, is
        # captured on its second run, and replayed afterwards
        assert cuda.captures == 2 and cuda.launches == 3 * 4 - 2 - 2
    # in float32 a captured step's objective is float32 arithmetic, the host loop's float64
    rtol, atol = (1e-5, 1e-6) if X.dtype == np.float32 else (1e-12, 1e-14)
    _assert_same_model(dev, cpu, rtol, atol)


@pytest.mark.parametrize("seed", range(10))
def test_graphed_fits_of_random_configurations_give_the_cpu_model(fake_graphs, seed):
    """Random networks (no hidden layer to two, every activation), solvers, batch sizes
    (Newton phases and batches too small for one), shuffling, early stopping, classes and
    weights with zeros, fitted with graphs on the fake ``cupy.cuda``: the CPU's model."""
    rng = np.random.RandomState(seed)
    n, d, n_classes = int(rng.randint(40, 160)), int(rng.randint(1, 5)), int(rng.choice([2, 3, 4]))
    X = rng.normal(size=(n, d)) * rng.choice([0.1, 1.0, 10.0]) + rng.choice([0.0, 5.0])
    y = rng.randint(0, n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)
    sw = None
    if rng.rand() < 0.4:
        sw = rng.uniform(0.0, 2.0, size=n)
        sw[rng.rand(n) < 0.1] = 0.0
        sw[:n_classes] = 1.0
    kw = dict(hidden_layer_sizes=tuple(int(u) for u in rng.randint(1, 9, rng.randint(0, 3))),
              activation=str(rng.choice(ACTIVATIONS)), solver=str(rng.choice(["ngd", "adam"])),
              batch_size=int(rng.choice([7, 32, n])), shuffle=bool(rng.rand() < 0.8),
              early_stopping=bool(rng.rand() < 0.3), newton_steps=int(rng.randint(1, 6)),
              cg_iter=int(rng.randint(1, 4)), max_iter=3, random_state=seed)
    cuda = fake_graphs()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cpu = NGDClassifier(device="cpu", **kw).fit(X, y, sample_weight=sw)
        dev = NGDClassifier(device="gpu", **kw).fit(X, y, sample_weight=sw)
    assert not [w for w in caught if "CUDA graph" in str(w.message)] and cuda.captures >= 1
    _assert_same_model(dev, cpu, 1e-10, 1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_newton_phase_on_device_takes_the_host_loops_steps(monkeypatch, seed):
    """The device form of the Newton phase (every trial length of the line search at once,
    a refused step ending the phase by zero steps) against the host loop: the same steps,
    backtracks and output layer on random batches with one or three outputs, weights, a
    proximal term, ``ftol``, Hessian subsampling, few allowed backtracks and trials in
    chunks."""
    from exactclf.ngd import _mlp

    rng = np.random.RandomState(seed)
    n_outputs = (1, 3)[seed % 2]
    n = int(rng.choice([40, 300, 2500]))
    _, Y, sw, S, _, _ = _problem(seed, n_outputs, n=n, weighted=seed % 3 == 0)
    Phi = rng.normal(size=(n, 6)) * rng.choice([0.1, 1.0, 5.0])
    W, b = rng.normal(size=(6, n_outputs)), rng.normal(size=n_outputs)
    kw = dict(n_steps=int(rng.randint(1, 8)), cg_iter=int(rng.randint(1, 6)),
              ftol=float(rng.choice([0.0, 1e-4, 1e-2])), proximal=float(rng.choice([0, 3.0])),
              penalty_rest=float(rng.uniform(0, 5)), max_backtracks=int(rng.choice([2, 40])),
              armijo_rho=float(rng.choice([0.5, 0.3])))
    if seed % 4 == 1:
        monkeypatch.setattr(_mlp, "_TRIAL_ENTRIES", 7 * n * n_outputs)  # chunks of 7 trials
    alpha = float(rng.choice([1e-4, 1.0]))
    host = newton_output_layer(Phi, Y, sw, S, W, b, alpha, np, **kw)
    dev = newton_output_layer(Phi, Y, sw, S, W, b, alpha, np, on_device=True, **kw)
    assert (int(dev.n_steps), int(dev.n_backtracks)) == (host.n_steps, host.n_backtracks)
    np.testing.assert_allclose(float(dev.loss), host.loss, rtol=1e-12)
    np.testing.assert_allclose(dev.W, host.W, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dev.b, host.b, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dev.probabilities, host.probabilities, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_output_hvp_equals_the_dense_hessian(n_outputs, weighted):
    """Against the Hessian written out from its formula: with the augmented basis
    ``u_i = (phi_i, 1)`` and ``A_i = diag(p_i) - p_i p_i^T`` (``p_i (1 - p_i)`` for one
    logit), ``H = sum_i s_i kron(u_i u_i^T, A_i) / S + alpha / S`` on the weights."""
    rng = np.random.RandomState(11)
    n, m = 17, 4
    Phi = rng.normal(size=(n, m))
    _, Y, sw, S, _, _ = _problem(11, n_outputs, n=n, weighted=weighted)
    W, b = rng.normal(size=(m, n_outputs)), rng.normal(size=n_outputs)
    alpha = 0.4
    Zl = Phi @ W + b
    if n_outputs == 1:
        Pm = 1.0 / (1.0 + np.exp(-Zl))
    else:
        Pm = np.exp(Zl - Zl.max(axis=1, keepdims=True))
        Pm /= Pm.sum(axis=1, keepdims=True)
    s = np.ones(n) if sw is None else sw
    H = np.zeros(((m + 1) * n_outputs, (m + 1) * n_outputs))
    for i in range(n):
        u = np.append(Phi[i], 1.0)
        A = np.diag(Pm[i]) - np.outer(Pm[i], Pm[i])
        H += s[i] * np.kron(np.outer(u, u), A)
    H /= S
    H[: m * n_outputs, : m * n_outputs] += alpha / S * np.eye(m * n_outputs)
    P = probabilities(output_logits(Phi, W, b), np)
    for _ in range(3):
        V = rng.normal(size=(m + 1, n_outputs))
        H_W, H_b = output_hvp(Phi, P, sw, S, V[:m], V[m], alpha, np)
        np.testing.assert_allclose(np.vstack([H_W, H_b]).ravel(), H @ V.ravel(), rtol=1e-12,
                                   atol=1e-14)


@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_subsampled_hvp_is_the_scaled_hvp_of_the_subsample(n_outputs, weighted):
    """A large batch's Hessian-vector products use every ``stride``-th sample, weighted up to
    the batch's total weight; the penalty stays whole."""
    rng = np.random.RandomState(5)
    n, m, stride, alpha = 61, 4, 3, 0.7
    Phi = rng.normal(size=(n, m))
    _, Y, sw, S, _, _ = _problem(5, n_outputs, n=n, weighted=weighted)
    W, b = rng.normal(size=(m, n_outputs)), rng.normal(size=n_outputs)
    P = probabilities(output_logits(Phi, W, b), np)
    V = rng.normal(size=(m + 1, n_outputs))
    layer = _OutputLayer(Phi, Y, sw, alpha, np, stride=stride)
    got = layer.hvp(layer.curvature(P.T), V)
    rows = slice(None, None, stride)
    sw_sub = None if sw is None else sw[rows]
    scale = S / (len(P[rows]) if sw is None else sw_sub.sum())
    H_W, H_b = output_hvp(Phi[rows], P[rows], sw_sub, 1.0, V[:m], V[m], 0.0, np)
    expected = scale * np.vstack([H_W, H_b])
    expected[:m] += alpha * V[:m]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("solver", ["ngd", "mlp"])
def test_benchmark_clocks_the_epochs_of_a_plain_fit(solver):
    """``benchmarks/ngd_vs_adam.py`` times the epochs inside one ``fit``: its hooks score the
    model of every epoch, and the fit is the plain one (its first k epochs are
    ``fit(max_iter=k)``)."""
    from exactclf._experiments import ngd_peaks

    X, y = make_peaks(300, random_state=0)
    X_val, y_val = make_peaks(100, random_state=1)
    params = dict(hidden_layer_sizes=(6, 4), activation="tanh", batch_size=100,
                  learning_rate_init=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        run = ngd_peaks.timed_fit(solver, params, (X, y, X_val, y_val), 0, 4)
        curve = []
        for k in range(1, 5):
            kw = dict(random_state=0, max_iter=k, n_iter_no_change=np.inf, **params)
            est = (NGDClassifier(device="cpu", **kw) if solver == "ngd"
                   else MLPClassifier(**kw)).fit(X, y)
            curve.append(est.score(X_val, y_val))
    assert len(run["seconds"]) == 4 and min(run["seconds"]) > 0
    assert run["val"] == curve


@pytest.mark.skipif(gpu_available(), reason="a GPU is usable here")
def test_gpu_request_without_gpu_raises():
    with pytest.raises(RuntimeError, match="device='gpu'"):
        NGDClassifier(device="gpu").fit([[0.0], [1.0]], [0, 1])


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["ngd", "weighted", "adam", "binary"])
def test_gpu_matches_cpu(case):  # pragma: no cover - needs a GPU
    """On CuPy, with the batch steps replayed as CUDA graphs (a capture that fails warns,
    which fails this test): the CPU's model."""
    X, y, kw, fit_kw = _iris_case(case, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.filterwarnings("error", message=".*CUDA graph")
        cpu = NGDClassifier(device="cpu", **kw).fit(X, y, **fit_kw)
        gpu = NGDClassifier(device="gpu", **kw).fit(X, y, **fit_kw)
    assert gpu.device_ == "gpu"
    np.testing.assert_allclose(gpu.loss_curve_, cpu.loss_curve_, rtol=1e-8)
    for a, b in zip(cpu.coefs_, gpu.coefs_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_graph_safe_products_equal_cupys(dtype):  # pragma: no cover - needs a GPU
    """The products that CUDA graphs capture (:class:`exactclf.ngd._device.GraphSafe`, by
    kernels of its own) against CuPy's cuBLAS: every kernel (tiled, a warp or a thread per
    output), transposed and strided operands, vectors, empty sums."""
    import cupy

    from exactclf.ngd._device import GraphSafe

    xp = GraphSafe(cupy)
    rng = np.random.RandomState(0)
    shapes = [(1024, 60, 256), (256, 1024, 256), (1, 257, 1024), (257, 1024, 1), (40, 1024, 1),
              (1024, 1, 1), (10, 257, 1024), (3, 5, 7), (65, 17, 130), (0, 4, 3), (4, 0, 3)]
    for M, K, N in shapes:
        for transpose_a in (False, True):
            for transpose_b in (False, True):
                A = rng.normal(size=(K, M) if transpose_a else (M, K)).astype(dtype)
                B = rng.normal(size=(N, K) if transpose_b else (K, N)).astype(dtype)
                A_d, B_d = cupy.asarray(A), cupy.asarray(B)
                A_d, B_d = (A_d.T if transpose_a else A_d), (B_d.T if transpose_b else B_d)
                got = xp.matmul(A_d, B_d).get()
                want = (A_d @ B_d).get()
                tol = 1e-12 if dtype == np.float64 else 1e-4
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1, K))
    v, W = cupy.asarray(rng.normal(size=9).astype(dtype)), cupy.asarray(
        rng.normal(size=(9, 4)).astype(dtype))
    np.testing.assert_allclose(xp.matmul(v, W).get(), (v @ W).get(), rtol=1e-4)
    np.testing.assert_allclose(xp.matmul(W.T, v).get(), (W.T @ v).get(), rtol=1e-4)
    np.testing.assert_allclose(float(xp.vdot(W, W)), float(cupy.vdot(W, W)), rtol=1e-4)


def test_sparse_input_equals_dense():
    X, y = load_iris(return_X_y=True)
    kw = dict(hidden_layer_sizes=(5,), max_iter=4, random_state=0, batch_size=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        dense = NGDClassifier(**kw).fit(X, y)
        sparse = NGDClassifier(**kw).fit(sp.csc_matrix(X), y)
    for a, b in zip(dense.coefs_, sparse.coefs_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(dense.predict_proba(X), sparse.predict_proba(sp.csr_matrix(X)),
                               atol=1e-8)


def test_string_labels_binary_probabilities_and_pickle():
    X, y = make_classification(120, 4, random_state=0)
    labels = np.array(["no", "yes"])[y]
    clf = NGDClassifier((5,), random_state=0).fit(X, labels)
    P = clf.predict_proba(X)
    assert P.shape == (120, 2) and np.allclose(P.sum(axis=1), 1)
    assert clf.out_activation_ == "logistic" and clf.coefs_[-1].shape == (5, 1)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[P.argmax(axis=1)])
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), P)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict_proba(X), P)


def test_one_class_is_refused():
    with pytest.raises(ValueError, match="at least 2 classes"):
        NGDClassifier().fit([[0.0], [1.0]], [1, 1])


def test_make_peaks_is_balanced_and_reproducible():
    X, y = make_peaks(1003, random_state=4)
    X2, y2 = make_peaks(1003, random_state=4)
    np.testing.assert_array_equal(X, X2)
    assert np.bincount(y).tolist() == [201, 201, 201, 200, 200]
    assert X.min() >= 0 and X.max() <= 1


def test_full_batch_loss_is_the_objective_after_the_newton_phase():
    """NGD's batch loss is taken after the Newton phase, before the Adam step moves the hidden
    layers: the objective of the previous epoch's hidden layers with the new output layer."""
    X, y = make_peaks(300, random_state=2)
    clf = NGDClassifier((8, 4), activation="tanh", batch_size=300, learning_rate_init=0.02,
                        alpha=1e-3, random_state=0)
    for _ in range(5):
        clf.partial_fit(X, y, classes=np.arange(5))
    hidden = [c.copy() for c in clf.coefs_[:-1]], [b.copy() for b in clf.intercepts_[:-1]]
    clf.partial_fit(X, y)
    coefs, intercepts = hidden[0] + clf.coefs_[-1:], hidden[1] + clf.intercepts_[-1:]
    Y = np.eye(5)[y]
    loss = _net_loss(X, Y, None, 300.0, coefs, intercepts, 1e-3, "tanh")
    assert clf.loss_ == pytest.approx(loss, rel=1e-10)


def test_float32_input_trains_in_float32():
    """As MLPClassifier: float32 data gives float32 weights and probabilities, and the
    "adam" solver makes MLPClassifier's float32 iterates."""
    X, y = load_iris(return_X_y=True)
    X32 = X.astype(np.float32)
    kw = dict(hidden_layer_sizes=(6,), activation="tanh", batch_size=50, max_iter=10,
              learning_rate_init=0.01, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp = MLPClassifier(**kw).fit(X32, y)
        for solver in ("adam", "ngd"):
            # on the CPU: a GPU's float32 arithmetic is not MLPClassifier's (4e-3 apart)
            clf = NGDClassifier(solver=solver, device="cpu", **kw).fit(X32, y)
            assert all(a.dtype == np.float32 for a in clf.coefs_ + clf.intercepts_)
            assert clf.predict_proba(X32).dtype == np.float32
            if solver == "ngd":
                assert clf.score(X32, y) > 0.9
            else:
                for a, b in zip(clf.coefs_, mlp.coefs_, strict=True):
                    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        # float64 input keeps float64
        assert NGDClassifier(**kw).fit(X, y).coefs_[0].dtype == np.float64


def test_verbose_prints_progress(capsys):
    X, y = load_iris(return_X_y=True)
    NGDClassifier((4,), verbose=1, tol=10.0, n_iter_no_change=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "Iteration 1, loss =" in out and "did not improve" in out


# -- minibatches too small for a Newton phase (issue 13, item 12) ------------------------------
@pytest.mark.parametrize("batch_size", [1, 5, 10])
@pytest.mark.parametrize("seed", [0, 1])
def test_tiny_batches_train_exactly_like_adam(batch_size, seed):
    """A batch with fewer samples than output-layer parameters per output gets the Adam step:
    NGD makes Adam's iterates (the Newton phase on such batches drove the weights to 1e4 and
    the accuracy to chance)."""
    from sklearn.datasets import make_moons

    X, y = make_moons(200, noise=0.2, random_state=seed)
    kw = dict(hidden_layer_sizes=(20,), batch_size=batch_size, max_iter=8, random_state=seed,
              n_iter_no_change=np.inf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ngd = NGDClassifier(solver="ngd", **kw).fit(X, y)
        adam = NGDClassifier(solver="adam", **kw).fit(X, y)
    assert np.isfinite(ngd.loss_curve_).all() and max(ngd.loss_curve_) < 1.0
    np.testing.assert_allclose(ngd.loss_curve_, adam.loss_curve_, rtol=1e-12)
    for a, b in zip(ngd.coefs_ + ngd.intercepts_, adam.coefs_ + adam.intercepts_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert ngd.score(X, y) == adam.score(X, y) > 0.8


def test_batches_missing_a_class_get_the_adam_step():
    """Sorted labels, no shuffling: every batch holds one class, none identifies the layer."""
    X, y = make_classification(120, 4, n_classes=3, n_informative=3, n_redundant=0,
                               random_state=0)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    kw = dict(hidden_layer_sizes=(3,), batch_size=40, shuffle=False, max_iter=5,
              random_state=0, n_iter_no_change=np.inf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ngd = NGDClassifier(solver="ngd", **kw).fit(X, y)
        adam = NGDClassifier(solver="adam", **kw).fit(X, y)
    np.testing.assert_allclose(ngd.loss_curve_, adam.loss_curve_, rtol=1e-12)
    # zero weights remove a class from a batch too
    sw = np.ones(len(y))
    sw[y == 2] = 0.0
    assert not identifies_output_layer(y, sw, 3, 3)
    assert identifies_output_layer(y, np.ones(len(y)), 3, 3)


def test_newton_phase_still_runs_on_batches_that_identify_the_layer():
    """Batches of 40 for a 3-unit basis: the Newton phase runs (NGD differs from Adam)."""
    X, y = load_iris(return_X_y=True)
    kw = dict(hidden_layer_sizes=(3,), batch_size=40, max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ngd = NGDClassifier(solver="ngd", **kw).fit(X, y)
        adam = NGDClassifier(solver="adam", **kw).fit(X, y)
    assert not np.allclose(ngd.coefs_[-1], adam.coefs_[-1])
    assert ngd.loss_ < adam.loss_


@pytest.mark.slow  # (8-11 s each; CI runs the slow tests)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_small_batches_that_identify_the_layer_train_no_worse_than_adam(n_classes):
    """Batches of 5-20 samples for a 4-unit basis pass the identification check; the Newton
    phase fitted each batch's own optimum, and NGD ended 0.1-0.5 below Adam in training
    accuracy with losses up to 5e3 (issue 16, item 5). The proximal term (the other batches
    modelled around the current layer) keeps it with Adam."""
    worst = np.inf
    for batch_size in (5, 10, 20):
        for seed in range(3):
            X, y = make_classification(200, 5, n_informative=3, n_redundant=0,
                                       n_classes=n_classes, random_state=seed)
            # on the CPU: batches of 5-20 are launch-bound on a GPU (over 90 s here)
            kw = dict(hidden_layer_sizes=(4,), batch_size=batch_size, max_iter=60,
                      random_state=seed, device="cpu")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                ngd = NGDClassifier(solver="ngd", **kw).fit(X, y)
                adam = NGDClassifier(solver="adam", **kw).fit(X, y)
            assert max(ngd.loss_curve_) < 1.5  # no blow-up
            worst = min(worst, ngd.score(X, y) - adam.score(X, y))
    assert worst >= -0.05


def test_proximal_term_keeps_the_layer_near_the_start():
    """The proximal Newton phase solves batch objective + mu/2 ||T - T0||^2: its gradient
    vanishes there, and a large weight keeps the layer at the start."""
    rng = np.random.RandomState(5)
    Phi = rng.normal(size=(30, 4))
    Y = np.eye(3)[rng.randint(0, 3, 30)]
    W0, b0 = rng.normal(size=(4, 3)), rng.normal(size=3)
    W0, b0 = W0 - W0.mean(axis=1, keepdims=True), b0 - b0.mean()
    res = newton_output_layer(Phi, Y, None, 30.0, W0, b0, 0.1, np, n_steps=40, cg_iter=20,
                              proximal=2.0)
    free = newton_output_layer(Phi, Y, None, 30.0, W0, b0, 0.1, np, n_steps=40, cg_iter=20)
    assert free.loss < res.loss < res.losses[0]
    far = newton_output_layer(Phi, Y, None, 30.0, W0, b0, 0.1, np, n_steps=40, cg_iter=20,
                              proximal=1e6)
    assert np.abs(far.W - W0).max() < 1e-4
    # stationarity of the proximal objective: S * grad F + mu (T - T0) = 0 for some mu > 0
    g_W, g_b = output_gradient(Phi, Y, None, 30.0, res.W, res.b, 0.1, np)
    G = np.vstack([g_W, g_b]).ravel() * 30.0
    D = np.vstack([res.W - W0, res.b - b0]).ravel()
    mu = -(G @ D) / (D @ D)
    assert mu > 0
    np.testing.assert_allclose(G + mu * D, 0.0, atol=1e-6 * np.abs(G).max())


# -- fitted state (issue 13, item 11) ------------------------------------------------------------
def test_failed_refit_leaves_an_unfitted_estimator():
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    X, y = load_iris(return_X_y=True)
    kw = dict(hidden_layer_sizes=(4,), max_iter=3, random_state=0)
    bad_X = X.copy()
    bad_X[0, 0] = np.nan
    for bad in ((bad_X, y), (X, np.zeros(len(y))), (X, y + 0.5)):
        clf = NGDClassifier(**kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, y)
        with pytest.raises(ValueError):
            clf.fit(*bad)
        with pytest.raises(NotFittedError):
            check_is_fitted(clf)
        assert not any(k.endswith("_") and not k.startswith("__") for k in vars(clf))


def test_partial_fit_keeps_the_model_and_fit_starts_afresh():
    X, y = load_iris(return_X_y=True)
    clf = NGDClassifier((4,), max_iter=3, random_state=0, batch_size=50)
    clf.partial_fit(X, y, classes=[0, 1, 2])
    clf.partial_fit(X, y)
    before = [c.copy() for c in clf.coefs_]
    bad = X.copy()
    bad[1, 1] = np.inf
    with pytest.raises(ValueError):
        clf.partial_fit(bad, y)  # refused before training: the model is kept
    for a, b in zip(before, clf.coefs_, strict=True):
        np.testing.assert_array_equal(a, b)
    assert clf.t_ == 300 and len(clf.loss_curve_) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    assert clf.t_ == 3 * 150 and len(clf.loss_curve_) == 3  # fit does not continue
    # a first partial_fit that fails leaves nothing behind (not even classes_)
    fresh = NGDClassifier((4,), random_state=0)
    with pytest.raises(ValueError):
        fresh.partial_fit(X, y + 5, classes=[0, 1, 2])
    assert not hasattr(fresh, "classes_")
    fresh.partial_fit(X, y + 5, classes=[5, 6, 7])
    np.testing.assert_array_equal(fresh.classes_, [5, 6, 7])


def test_non_finite_weights_leave_no_model(monkeypatch):
    X, y = load_iris(return_X_y=True)
    clf = NGDClassifier((4,), max_iter=2, random_state=0)
    real = _ngd.NGDClassifier._train

    def poisoned(self, *args, **kwargs):
        real(self, *args, **kwargs)
        self.coefs_[0][0, 0] = np.nan

    monkeypatch.setattr(_ngd.NGDClassifier, "_train", poisoned)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.raises(ValueError, match="non-finite"):
            clf.fit(X, y)
    assert not hasattr(clf, "coefs_") and not hasattr(clf, "classes_")


# -- degenerate and awkward data (issue 13, items 5 and 18) ----------------------------------
@pytest.mark.parametrize("solver", ["ngd", "adam"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_all_rows_identical_give_the_class_frequencies(solver, n_classes):
    """One unique point: the model predicts the majority class with (about) the class
    frequencies as probabilities; far from the origin (unscaled input saturates the
    network, as in MLPClassifier) still the majority class and finite probabilities."""
    counts = [13, 7, 4][:n_classes]
    y = np.repeat(np.arange(n_classes), counts)
    for offset in (1.0, 1e6):
        X = np.full((len(y), 3), offset)
        clf = NGDClassifier((5,), solver=solver, max_iter=300, learning_rate_init=0.01,
                            random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, y)
        assert (clf.predict(X) == 0).all()
        P = clf.predict_proba(X)
        assert np.isfinite(P).all() and np.ptp(P, axis=0).max() < 1e-12
        if offset == 1.0:  # Newton fits the log-odds; 300 Adam steps get near them
            np.testing.assert_allclose(P[0], np.array(counts) / len(y),
                                       atol=0.02 if solver == "ngd" else 0.1)


def _awkward(rng, kind):
    n, d = int(rng.integers(6, 40)), int(rng.integers(1, 4))
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    if kind == "duplicates":
        X = np.repeat(X[: n // 3 + 1], 3, axis=0)[:n]
        y = rng.integers(0, 2, n)
    elif kind == "constant_feature":
        X[:, -1] = 3.0
    elif kind == "huge_offset":
        X = X + 1e10
    elif kind == "tiny_scale":
        X = X * 1e-200
    elif kind == "one_sample_class":
        y = np.zeros(n, int)
        y[int(rng.integers(n))] = 1
        y[int(rng.integers(n))] = 2 if n > 8 else 1
    elif kind == "float32":
        X = X.astype(np.float32)
    elif kind == "integer_grid":
        X = rng.integers(-2, 3, size=(n, d))
    if len(np.unique(y)) < 2:
        y[0] = 1 - y[0]
    return X, y


@pytest.mark.parametrize("kind", ["duplicates", "constant_feature", "huge_offset", "tiny_scale",
                                  "one_sample_class", "float32", "integer_grid"])
@pytest.mark.parametrize("solver", ["ngd", "adam"])
def test_awkward_inputs_give_finite_models(kind, solver):
    rng = np.random.default_rng(abs(hash((kind, solver))) % 2**32)
    for batch_size in ("auto", 3):
        X, y = _awkward(rng, kind)
        clf = NGDClassifier((4,), solver=solver, batch_size=batch_size, max_iter=15,
                            random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, y)
        assert all(np.isfinite(a).all() for a in clf.coefs_ + clf.intercepts_)
        assert np.isfinite(clf.loss_curve_).all()
        P = clf.predict_proba(X)
        assert np.isfinite(P).all() and np.allclose(P.sum(axis=1), 1.0)
        assert set(clf.predict(X)) <= set(np.unique(y))


def test_overflowing_input_is_refused():
    X = np.array([[1e308, 0.0], [-1e308, 1.0], [1e308, 2.0], [-1e308, 3.0]])
    clf = NGDClassifier((4,), max_iter=3, random_state=0)
    with pytest.raises(ValueError, match="overflow"), np.errstate(all="ignore"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, [0, 1, 0, 1])
    assert not hasattr(clf, "coefs_")
