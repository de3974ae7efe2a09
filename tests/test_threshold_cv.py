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
    common = {"n_arrangements": 100, "random_state": 0}
    cv = ThresholdNetLassoRegressorCV(betas=6, cv=folds, **common).fit(X, y)
    gs = GridSearchCV(ThresholdNetLassoRegressor(**common),
                      {"beta": list(cv.betas_)}, cv=folds, scoring="neg_mean_squared_error")
    gs.fit(X, y)
    # the path solves on working sets, a single fit on the whole dictionary: the same
    # networks up to the solvers' accuracy (both certified), not to the last digit; another
    # network (another vertex of an optimal face) would differ by far more
    np.testing.assert_allclose(cv.mse_path_.mean(axis=1), -gs.cv_results_["mean_test_score"],
                               rtol=1e-4)
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


# -- working-set (screened) interior-point solves along a path --------------------------------
def _degenerate_design(rng, n, p):
    """Random 0/1 columns, the bias first and complementary pairs (``d + d' = bias``): the
    dependent columns and tied correlations of an arrangement dictionary."""
    D = (rng.random((n, p)) < 0.5).astype(float)
    D[:, 0] = 1.0
    D[:, 1:p // 4] = 1.0 - D[:, p // 4:2 * (p // 4) - 1]  # complements: d + d' = bias
    return D


def _sklearn_objective(D, y, s, beta):
    """An independent solver: scikit-learn's coordinate descent, run far past tol."""
    from sklearn.linear_model import Lasso

    r = np.sqrt(s)
    est = Lasso(alpha=beta / len(y), fit_intercept=False, tol=1e-12, max_iter=10**5)
    est.fit(D * r[:, None], y * r)
    return 0.5 * np.sum(s * (D @ est.coef_ - y) ** 2) + beta * np.abs(est.coef_).sum()


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("seed", range(6))
def test_path_warm_start_matches_full_solves(seed):
    from exactclf.threshold._solvers import solve_lasso

    rng = np.random.default_rng(seed)
    n, p = 30, 80
    D = _degenerate_design(rng, n, p)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0) + (seed % 2) * rng.standard_normal(n)
    s = rng.integers(1, 4, n).astype(float)
    tol = 1e-7
    target = tol * 0.5 * np.sum(s * y**2)
    top = np.abs(D.T @ (s * y)).max()
    w = np.zeros(p)
    for beta in np.geomspace(top, 1e-3 * top, 8)[1:]:
        w, _, primal, gap, ok = solve_lasso(D, y, beta, "squared", "ipm", s, tol=tol, w0=w)
        full, _, f_primal, f_gap, f_ok = solve_lasso(D, y, beta, "squared", "ipm", s, tol=tol)
        assert ok and f_ok and gap <= target and f_gap <= target
        # the reported gap is exactclf's own certificate over the whole dictionary: the
        # primal point alone (its residual, scaled into the constraints) gives a valid bound
        own_primal, _ = duality_gap(D, y, w, beta, "squared", s)
        assert own_primal == pytest.approx(primal, rel=1e-12, abs=1e-12)
        assert abs(primal - f_primal) <= gap + f_gap + 1e-9
        # an independent solver's point cannot beat the certified lower bound, nor is the
        # certified point worse than it by more than the gap
        other = _sklearn_objective(D, y, s, beta)
        assert primal - gap - 1e-9 <= other <= primal + gap + 1e-4 * abs(primal)
        assert primal <= other + gap + 1e-9


def test_screened_ipm_grows_its_working_set_to_the_optimum():
    from exactclf.threshold._solvers import _solve_ipm, _solve_ipm_screened

    rng = np.random.default_rng(7)
    n, p = 40, 120
    D = _degenerate_design(rng, n, p)
    y = rng.standard_normal(n)
    s = np.ones(n)
    beta = 0.02 * np.abs(D.T @ y).max()
    keep = np.zeros(p, dtype=bool)
    keep[:5] = True  # far too few: the optimum needs columns outside it
    target = 1e-8 * 0.5 * y @ y
    w, theta, active, _, ok = _solve_ipm_screened(D, y, beta, s, target, 1000, keep)
    assert ok and np.any(active & ~keep)
    # dual feasible over the whole dictionary (up to the solver's accuracy) ...
    assert np.abs(D.T @ theta).max() <= beta * (1 + 1e-6)
    # ... and the same optimum as the solve on every column
    _, gap = duality_gap(D, y, w, beta, "squared", s, theta=theta)
    w_full, theta_full, *_ = _solve_ipm(D, y, beta, s, target, 1000)
    p_full, gap_full = duality_gap(D, y, w_full, beta, "squared", s, theta=theta_full)
    p_ws, _ = duality_gap(D, y, w, beta, "squared", s)
    assert gap <= target and abs(p_ws - p_full) <= gap + gap_full + 1e-9
    # the dual optimum is unique (the dual is 1-strongly concave for unit weights)
    bound = np.sqrt(2 * gap) + np.sqrt(2 * gap_full)
    assert np.linalg.norm(theta - theta_full) <= 2 * bound + 1e-9


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("seed", range(5))
def test_ipm_on_a_narrow_design_solves_the_primal_qp(seed):
    """Fewer columns than half the points (a working set): the interior-point method solves
    the primal QP; its point is certified over the dictionary and is a vertex."""
    from exactclf.threshold._solvers import _solve_ipm, solve_lasso

    rng = np.random.default_rng(seed)
    n, p = 40, 16
    D = _degenerate_design(rng, n, p)
    y = rng.standard_normal(n) + D[:, 3]
    s = rng.integers(1, 3, n).astype(float)
    beta = rng.choice([0.01, 0.1, 0.5]) * np.abs(D.T @ (s * y)).max()
    target = 1e-8 * 0.5 * np.sum(s * y**2)
    w, theta, active, _, ok = _solve_ipm(D, y, beta, s, target, 1000)
    _, gap = duality_gap(D, y, w, beta, "squared", s, theta=theta)
    assert ok and gap <= target
    assert np.allclose(theta, s * (y - D @ w))  # the primal's dual point: its residual
    assert np.all(np.abs(D.T @ theta)[active] >= beta * (1 - 1e-4))  # active: tight
    w, _, primal, gap, ok = solve_lasso(D, y, beta, "squared", "ipm", s, tol=1e-8)
    assert ok and np.count_nonzero(w) <= np.linalg.matrix_rank(D)
    other = _sklearn_objective(D, y, s, beta)
    assert primal - gap - 1e-9 <= other and primal <= other + gap + 1e-9


def test_sampled_path_is_certified_at_every_beta_and_matches_single_fits():
    """A path long enough for the working sets to grow over several re-solves."""
    X, y = _subsample("haberman", 80, seed=1)
    t = np.where(y == y.max(), 1.0, -1.0)
    kw = {"arrangements": "sample", "n_arrangements": 300, "random_state": 0}
    betas, coefs, gaps, patterns = threshold_path(X, t, betas=10, eps=1e-3, **kw)
    D = patterns.astype(float)
    s = np.ones(len(t))
    for j in range(0, len(betas), 3):
        # exactclf's own gap, from the primal point alone, over the whole dictionary
        p, g = duality_gap(D, t, coefs[:, j], betas[j], "squared", s)
        assert gaps[j] <= 1e-6 * 0.5 * len(t) and g <= 1e-3 * 0.5 * len(t)
        clf = ThresholdNetLasso(beta=betas[j], **kw).fit(X, y)
        assert abs(clf.objective_ - p) <= clf.dual_gap_ + gaps[j] + 1e-9


def test_cv_with_class_weight_matches_grid_search():
    """class_weight on the CV classifier: each fold weighs its own training labels (as
    GridSearchCV's clones do), never the fold's weights twice; the final network is
    ThresholdNetLasso's with the same class weights, and its certificate says so."""
    from exactclf import verify

    X, y = _subsample("haberman", 90)
    w = np.random.default_rng(0).integers(1, 4, len(y)).astype(float)
    folds = StratifiedKFold(3)
    for class_weight in ("balanced", {0: 1.0, 1: 3.0}):
        common = {"n_arrangements": 120, "random_state": 0, "class_weight": class_weight}
        # (without sample weights: GridSearchCV also weighs its held-out scores by them)
        cv = ThresholdNetLassoCV(betas=4, eps=1e-2, cv=folds, **common).fit(X, y)
        gs = GridSearchCV(ThresholdNetLasso(**common), {"beta": list(cv.betas_)}, cv=folds)
        gs.fit(X, y)
        np.testing.assert_allclose(cv.accuracy_path_.mean(axis=1),
                                   gs.cv_results_["mean_test_score"], atol=0.005)
        cv = ThresholdNetLassoCV(betas=4, eps=1e-2, cv=folds, **common).fit(
            X, y, sample_weight=w)
        ref = ThresholdNetLasso(beta=cv.beta_, **common).fit(X, y, sample_weight=w)
        np.testing.assert_allclose(cv.objective_, ref.objective_, rtol=1e-6)
        assert "class" in cv.certificate_.objective
        assert verify(cv, X, y, sample_weight=w).ok
