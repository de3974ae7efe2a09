"""threshold_path and ThresholdNetLasso(Regressor)CV: certified paths, GridSearchCV's choice."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold

from exactclf.datasets import load_dataset
from exactclf.threshold import (
    ThresholdNetLasso,
    ThresholdNetLassoCV,
    ThresholdNetLassoRegressor,
    ThresholdNetLassoRegressorCV,
    threshold_path,
)
from exactclf.threshold._solvers import duality_gap


def _subsample(name, n, seed=0):
    data = load_dataset(name)
    idx = np.random.default_rng(seed).choice(len(data.data), n, replace=False)
    return data.data[idx], data.target[idx]


# -- threshold_path --------------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["squared", "logistic", "hinge"])
def test_path_solutions_are_certified_and_match_single_fits(loss):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((9, 2))
    y = np.where(rng.random(9) < 0.5, -1.0, 1.0)
    y[:2] = [-1, 1]
    solver = {"logistic": "sklearn"}.get(loss, "auto")
    kw = {"tol": 1e-8, "max_iter": 100000} if loss == "logistic" else {}
    betas, coefs, gaps, patterns = threshold_path(X, y, betas=5, eps=1e-2, loss=loss,
                                                  arrangements="exact", solver=solver, **kw)
    assert np.all(np.diff(betas) < 0)
    assert np.all(coefs[:, 0] == 0)  # beta_max: the zero network
    assert np.any(coefs[:, -1] != 0)
    D = patterns.astype(float)
    s = np.ones(len(y))
    for j, beta in enumerate(betas):
        # the reported gap is exactclf's own certificate, recomputed here from the primal
        # point (and for the squared loss it can only be larger without the solver's dual)
        p, g = duality_gap(D, y, coefs[:, j], beta, loss, s)
        assert gaps[j] <= 1e-6 * len(y) + 1e-12
        if loss != "hinge":
            assert g <= max(gaps[j], 1e-6 * len(y)) * 1.01 + 1e-12
        # the same objective as the estimator fitted at that beta alone (both certified)
        clf = ThresholdNetLasso(beta=beta, arrangements="exact", loss=loss, solver=solver,
                                **kw).fit(X, (y > 0).astype(int))
        assert abs(clf.objective_ - p) <= clf.dual_gap_ + gaps[j] + 1e-9


def test_path_beta_max_is_the_smallest_zero_beta():
    X, y = _subsample("haberman", 40)
    t = np.where(y == y.max(), 1.0, -1.0)
    betas, coefs, _, patterns = threshold_path(X, t, betas=3, arrangements="sample",
                                               n_arrangements=200, random_state=0)
    assert betas[0] == pytest.approx(np.abs(patterns.T.astype(float) @ t).max())
    assert np.all(coefs[:, 0] == 0)
    below, below_coefs, _, _ = threshold_path(X, t, betas=[0.5 * betas[0]],
                                              arrangements="sample", n_arrangements=200,
                                              random_state=0)
    assert np.any(below_coefs[:, 0] != 0)


def test_path_multi_output_and_bad_input():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((10, 2))
    Y = rng.standard_normal((10, 2))
    betas, coefs, gaps, patterns = threshold_path(X, Y, betas=3, arrangements="exact")
    assert coefs.shape == (2, patterns.shape[1], 3)
    with pytest.raises(ValueError, match="-1, \\+1"):
        threshold_path(X, Y[:, 0], loss="hinge")
    with pytest.raises(ValueError, match="positive"):
        threshold_path(X, Y[:, 0], betas=[1.0, -1.0])


# -- cross-validation ------------------------------------------------------------------------
CASES = [("haberman", 90, "squared"), ("bloodtransfer", 90, "squared"),
         ("cryotherapy", 60, "hinge"), ("voicepath", 80, "squared")]


@pytest.mark.parametrize(("name", "n", "loss"), CASES)
def test_cv_matches_grid_search(name, n, loss):
    X, y = _subsample(name, n)
    folds = StratifiedKFold(3)
    common = {"n_arrangements": 150, "random_state": 0, "loss": loss}
    cv = ThresholdNetLassoCV(betas=5, eps=1e-2, cv=folds, **common).fit(X, y)
    gs = GridSearchCV(ThresholdNetLasso(**common), {"beta": list(cv.betas_)}, cv=folds)
    gs.fit(X, y)
    mean = cv.accuracy_path_.mean(axis=1)
    # every fold's network is the one ThresholdNetLasso fits there: the same score paths
    np.testing.assert_allclose(mean, gs.cv_results_["mean_test_score"], atol=0.005)
    assert cv.beta_ == gs.best_params_["beta"] or (
        mean[list(cv.betas_).index(gs.best_params_["beta"])] >= mean.max() - 0.005)
    # the final model is ThresholdNetLasso's fit on all the data at beta_, certified
    ref = ThresholdNetLasso(beta=cv.beta_, **common).fit(X, y)
    np.testing.assert_allclose(cv.objective_, ref.objective_, rtol=1e-6)
    assert np.array_equal(cv.predict(X), ref.predict(X))
    assert cv.dual_gap_ <= 1e-6 * n
    assert cv.accuracy_path_.shape == cv.n_neurons_path_.shape == (5, 3)


def test_regressor_cv_matches_grid_search_mse():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (45, 2))
    y = np.sign(X[:, 0]) + (X[:, 1] > 0.3) + 0.3 * rng.standard_normal(45)
    folds = KFold(3, shuffle=True, random_state=0)
    cv = ThresholdNetLassoRegressorCV(betas=6, cv=folds, n_arrangements=100,
                                      random_state=0).fit(X, y)
    gs = GridSearchCV(ThresholdNetLassoRegressor(n_arrangements=100, random_state=0),
                      {"beta": list(cv.betas_)}, cv=folds, scoring="neg_mean_squared_error")
    gs.fit(X, y)
    np.testing.assert_allclose(cv.mse_path_.mean(axis=1), -gs.cv_results_["mean_test_score"],
                               rtol=1e-6)
    assert cv.beta_ == gs.best_params_["beta"]
    assert cv.coef_.ndim == 1 and cv.is_optimal_ in (True, False)


def test_cv_closed_form_folds_and_explicit_grid():
    """Few points in many dimensions: every fold is a complete arrangement (closed form)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 20))
    y = rng.standard_normal(12)
    cv = ThresholdNetLassoRegressorCV(betas=[0.01, 1.0, 0.1], cv=3).fit(X, y)
    assert np.array_equal(cv.betas_, [1.0, 0.1, 0.01])
    assert cv.arrangements_ == "closed_form" and cv.is_optimal_
    ref = ThresholdNetLassoRegressor(beta=cv.beta_).fit(X, y)
    np.testing.assert_allclose(cv.predict(X), ref.predict(X))


def test_cv_parallel_folds_equal_serial():
    X, y = _subsample("haberman", 60, seed=2)
    kw = {"betas": 4, "cv": 3, "n_arrangements": 80, "random_state": 0}
    a = ThresholdNetLassoCV(n_jobs=1, **kw).fit(X, y)
    b = ThresholdNetLassoCV(n_jobs=2, **kw).fit(X, y)
    np.testing.assert_array_equal(a.accuracy_path_, b.accuracy_path_)
    assert a.beta_ == b.beta_


def test_warm_start_already_certified_is_returned_at_once():
    from exactclf.threshold._solvers import solve_lasso

    rng = np.random.default_rng(0)
    D = (rng.random((20, 40)) < 0.5).astype(float)
    D[:, 0] = 1.0
    y = np.where(rng.random(20) < 0.5, -1.0, 1.0)
    s = np.ones(20)
    w, it, primal, gap, ok = solve_lasso(D, y, 0.3, "squared", "ipm", s, tol=1e-8)
    assert ok and it > 0
    # certified from w alone (its residual as the dual point) within a looser tol
    _, own_gap = duality_gap(D, y, w, 0.3, "squared", s)
    tol = 2 * own_gap / 10.0
    w2, it2, primal2, gap2, ok2 = solve_lasso(D, y, 0.3, "squared", "ipm", s, tol=tol, w0=w)
    assert ok2 and it2 == 0 and np.array_equal(w2, w) and gap2 == own_gap
    # a start that is not certified is not returned as is
    w3, it3, _, gap3, ok3 = solve_lasso(D, y, 0.1, "squared", "ipm", s, tol=1e-8, w0=w)
    assert ok3 and it3 > 0 and gap3 <= 1e-8 * 10
