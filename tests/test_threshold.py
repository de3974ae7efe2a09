"""ThresholdNetLasso: exactness against brute force, closed form, certificates, errors."""

import itertools
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.optimize import linprog
from sklearn.exceptions import ConvergenceWarning

from exactclf.datasets import load_dataset
from exactclf.threshold import ThresholdNetLasso, ThresholdNetLassoRegressor
from exactclf.threshold import _solvers as solvers_module
from exactclf.threshold._arrangements import cover_count, exact_patterns, sample_patterns
from exactclf.threshold._closed_form import closed_form_fit, layer_cake, project_l1_ball
from exactclf.threshold._solvers import duality_gap, skglm_available, solve_lasso

FAST = {"solver": "sklearn", "tol": 1e-9, "max_iter": 100000}


# -- independent references ----------------------------------------------------------------
def separable(X, positive):
    """LP feasibility of ``s_i (a . x_i + b) >= 1``."""
    s = np.where(positive, 1.0, -1.0)
    A = -s[:, None] * np.hstack([X, np.ones((len(X), 1))])
    res = linprog(np.zeros(X.shape[1] + 1), A_ub=A, b_ub=-np.ones(len(X)),
                  bounds=(None, None), method="highs")
    return res.status == 0


def brute_force_patterns(X):
    """Every non-empty subset of the rows of X (duplicates share a side) that an affine
    classifier realizes, by one LP per labeling of the unique rows."""
    U, inv = np.unique(X, axis=0, return_inverse=True)
    inv = inv.ravel()
    cols = []
    for bits in itertools.product([False, True], repeat=len(U)):
        lab = np.array(bits)
        if lab.any() and (lab.all() or separable(U, lab)):
            cols.append(lab[inv])
    return np.column_stack(cols)


def lasso_reference(D, y, beta, gap_tol=1e-11):
    """``min 1/2 |D w - y|^2 + beta |w|_1`` by accelerated proximal gradient (FISTA with
    adaptive restart; a different algorithm from the estimators' solvers), run until its own
    duality gap is below ``gap_tol``."""
    L = np.linalg.norm(D, 2) ** 2
    w = z = np.zeros(D.shape[1])
    t = 1.0
    for it in range(2_000_000):
        g = D.T @ (D @ z - y)
        v = z - g / L
        w_new = np.sign(v) * np.maximum(np.abs(v) - beta / L, 0.0)
        t_new = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        if (z - w_new) @ (w_new - w) > 0:  # restart
            t_new, z = 1.0, w_new
        else:
            z = w_new + (t - 1) / t_new * (w_new - w)
        w, t = w_new, t_new
        if it % 200 == 0:
            r = y - D @ w
            p = 0.5 * r @ r + beta * np.abs(w).sum()
            th = r * min(1.0, beta / np.abs(D.T @ r).max())
            if p - (y @ th - 0.5 * th @ th) <= gap_tol:
                return p
    raise AssertionError("reference solver did not converge")


def small_data(kind, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "gaussian":
        X = rng.standard_normal((8, 2))
    elif kind == "degenerate":  # duplicates, collinear points, integer features
        X = np.array([[0, 0], [1, 1], [2, 2], [3, 3], [1, 1], [0, 2], [2, 0], [1, 0]], float)
    else:  # rank-deficient: 3 features exactly on a plane (B on a grid of 2**-20: no rounding)
        B = np.round(rng.standard_normal((7, 2)) * 2**20) / 2**20
        X = np.column_stack([B, B[:, 0] - 2 * B[:, 1]])
    y = rng.integers(0, 2, len(X))
    y[:2] = [0, 1]
    return X, y


# -- exactness ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["gaussian", "degenerate", "rank_deficient"])
@pytest.mark.parametrize("beta", [0.05, 0.5])
@pytest.mark.parametrize("solver", ["sklearn", "lars", "ipm"])
def test_exact_matches_brute_force(kind, beta, solver):
    X, y = small_data(kind)
    clf = ThresholdNetLasso(beta=beta, arrangements="exact", solver=solver, tol=1e-9,
                            max_iter=100000).fit(X, y)
    D = brute_force_patterns(X).astype(float)
    ys = 2.0 * y - 1.0
    ref = lasso_reference(D, ys, beta)
    assert clf.arrangements_ == "exact"
    assert clf.n_patterns_ == D.shape[1]
    assert clf.is_optimal_
    assert clf.objective_ == pytest.approx(ref, rel=1e-7, abs=1e-9)
    # the certificate is a true lower bound and tight
    assert clf.objective_ - clf.dual_gap_ <= ref + 1e-9
    assert clf.dual_gap_ <= 1e-6 * 0.5 * len(y)
    # the network realizes D w: hidden activations are realizable patterns, and its
    # training output gives the reported objective
    H = clf.hidden_activations(X).astype(bool)
    Dset = {c.tobytes() for c in D.astype(bool).T}
    assert all(h.tobytes() in Dset for h in H.T)
    f = clf.decision_function(X)
    np.testing.assert_allclose(f, H @ clf.coef_[0])
    assert 0.5 * np.sum((f - ys) ** 2) + beta * np.abs(clf.coef_).sum() == pytest.approx(
        clf.objective_, rel=1e-12)


def test_exact_patterns_equal_brute_force_count():
    X, _ = small_data("gaussian")
    arr = exact_patterns(X)
    D = brute_force_patterns(X)
    assert {c.tobytes() for c in arr.patterns.T} == {c.tobytes() for c in D.T}
    assert arr.patterns.shape[1] == cover_count(8, 2) - 1  # general position, no empty set


def test_regressor_exact_matches_brute_force():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((7, 2))
    y = rng.standard_normal(7)
    reg = ThresholdNetLassoRegressor(beta=0.1, arrangements="exact", **FAST).fit(X, y)
    ref = lasso_reference(brute_force_patterns(X).astype(float), y, 0.1)
    assert reg.objective_ == pytest.approx(ref, rel=1e-7)
    pred = reg.predict(X)
    assert 0.5 * np.sum((pred - y) ** 2) + 0.1 * np.abs(reg.coef_).sum() == pytest.approx(
        reg.objective_, rel=1e-12)


# -- closed form ----------------------------------------------------------------------------
def test_closed_form_pieces():
    v = np.array([3.0, -1.0, 0.5])
    p = project_l1_ball(v, 1.5)
    assert np.abs(p).sum() == pytest.approx(1.5)
    delta = np.array([0.3, -0.2, 0.3, 0.0, 1.0])
    P, w = layer_cake(delta)
    np.testing.assert_allclose(P @ w, delta)
    assert np.abs(w).sum() == pytest.approx(1.0 + 0.2)
    # the prox is optimal: brute-force over a grid of the 1-d problem is not better
    y = np.array([1.0, 1.0, -1.0])
    d = closed_form_fit(y, 0.4)
    obj = 0.5 * np.sum((d - y) ** 2) + 0.4 * (max(d.max(), 0) + max(-d.min(), 0))
    for a in np.linspace(0, 1, 101):
        for b in np.linspace(0, 1, 101):
            t = np.array([a, a, -b])
            assert obj <= 0.5 * np.sum((t - y) ** 2) + 0.4 * (a + b) + 1e-12


@pytest.mark.parametrize("beta", [0.01, 0.3, 10.0])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_closed_form_equals_general_program(beta, n_classes):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((6, 7))  # 6 points in dimension 7: complete arrangement
    y = np.arange(6) % n_classes
    cf = ThresholdNetLasso(beta=beta).fit(X, y)
    general = ThresholdNetLasso(beta=beta, arrangements="exact", **FAST).fit(X, y)
    assert cf.arrangements_ == "closed_form" and general.arrangements_ == "exact"
    assert general.n_patterns_ == 2**6 - 1
    assert cf.objective_ == pytest.approx(general.objective_, rel=1e-8, abs=1e-10)
    assert cf.dual_gap_ <= 1e-10
    np.testing.assert_allclose(cf.decision_function(X), general.decision_function(X),
                               atol=1e-5)


@pytest.mark.parametrize("reconstruction", ["pi", "svm"])
def test_closed_form_reconstructions_realize_objective(reconstruction):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((20, 100))
    y = rng.integers(0, 2, 20)
    clf = ThresholdNetLasso(beta=1e-3, reconstruction=reconstruction).fit(X, y)
    assert clf.arrangements_ == "closed_form" and clf.is_optimal_
    ys = 2.0 * y - 1.0
    n_pos, n_neg = (ys > 0).sum(), (ys < 0).sum()
    # closed form: positives at 1 - beta / n_pos, negatives at -(1 - beta / n_neg)
    np.testing.assert_allclose(clf.decision_function(X),
                               np.where(ys > 0, 1 - 1e-3 / n_pos, -(1 - 1e-3 / n_neg)))
    assert (clf.predict(X) == y).all()


def test_closed_form_regressor():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((5, 6))
    y = rng.standard_normal(5)
    cf = ThresholdNetLassoRegressor(beta=0.2).fit(X, y)
    general = ThresholdNetLassoRegressor(beta=0.2, arrangements="exact", **FAST).fit(X, y)
    assert cf.arrangements_ == "closed_form"
    assert cf.objective_ == pytest.approx(general.objective_, rel=1e-8)


# -- sampling ---------------------------------------------------------------------------------
def test_sampled_converges_to_exact():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((14, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    exact = ThresholdNetLasso(beta=0.05, arrangements="exact", **FAST).fit(X, y)
    gaps = []
    for m in [5, 50, 20000]:
        s = ThresholdNetLasso(beta=0.05, arrangements="sample", n_arrangements=m,
                              random_state=0, **FAST).fit(X, y)
        assert not s.is_optimal_
        assert s.objective_ >= exact.objective_ - 1e-8
        gaps.append(s.objective_ - exact.objective_)
    assert gaps[0] > gaps[-1]
    assert gaps[-1] <= 1e-6


def test_sample_patterns_unique_and_planes_realize_them():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((30, 3))
    arr = sample_patterns(Z, 500, rng)
    P = arr.patterns
    assert P[:, 0].all() and P[:, 1:].any(axis=0).all()
    assert len({c.tobytes() for c in P.T}) == P.shape[1]
    Zh = np.hstack([Z, np.ones((30, 1))])
    np.testing.assert_array_equal(Zh @ arr.planes >= 0, P)


# -- other losses, weights, deep, multiclass ---------------------------------------------------
@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_other_losses_certified(loss):
    X, y = small_data("gaussian", seed=1)
    clf = ThresholdNetLasso(beta=0.1, arrangements="exact", loss=loss, **(
        {"solver": "sklearn", "tol": 1e-8, "max_iter": 100000} if loss == "logistic" else {}
    )).fit(X, y)
    assert clf.dual_gap_ <= 1e-6 * len(y)
    assert clf.is_optimal_
    # the lower bound is below the objective of random feasible points
    D = brute_force_patterns(X).astype(float)
    ys = 2.0 * y - 1.0
    rng = np.random.default_rng(0)
    for _ in range(20):
        w = rng.standard_normal(D.shape[1]) * 0.1
        p, _ = duality_gap(D, ys, w, 0.1, loss, np.ones(len(y)))
        assert clf.objective_ - clf.dual_gap_ <= p + 1e-9


def test_sample_weight_equals_repetition():
    X, y = small_data("gaussian", seed=2)
    sw = np.array([1, 2, 1, 3, 1, 1, 2, 1])
    a = ThresholdNetLasso(beta=0.1, arrangements="exact", **FAST).fit(X, y, sample_weight=sw)
    b = ThresholdNetLasso(beta=0.1, arrangements="exact", **FAST).fit(
        np.repeat(X, sw, axis=0), np.repeat(y, sw))
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-7)


def test_deep_network_realizes_objective():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((40, 3))
    y = (np.sin(3 * X[:, 0]) + X[:, 1] > 0).astype(int)
    clf = ThresholdNetLasso(beta=0.05, hidden_layer_sizes=(4,), n_arrangements=300,
                            random_state=0, **FAST).fit(X, y)
    assert len(clf.hidden_coefs_) == 2
    f = clf.decision_function(X)
    ys = 2.0 * y - 1.0
    assert 0.5 * np.sum((f - ys) ** 2) + 0.05 * np.abs(clf.coef_).sum() == pytest.approx(
        clf.objective_, rel=1e-10)
    assert not clf.is_optimal_


def test_multiclass_one_lasso_per_class():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((12, 2))
    y = np.arange(12) % 3
    clf = ThresholdNetLasso(beta=0.05, arrangements="exact", **FAST).fit(X, y)
    F = clf.decision_function(X)
    assert F.shape == (12, 3) and clf.coef_.shape[0] == 3
    Y = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
    assert 0.5 * np.sum((F - Y) ** 2) + 0.05 * np.abs(clf.coef_).sum() == pytest.approx(
        clf.objective_, rel=1e-10)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[F.argmax(axis=1)])


def test_skglm_and_sklearn_agree():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((30, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    kw = {"beta": 0.05, "n_arrangements": 300, "random_state": 0, "tol": 1e-9}
    a = ThresholdNetLasso(solver="skglm", **kw).fit(X, y)
    b = ThresholdNetLasso(solver="sklearn", max_iter=100000, **kw).fit(X, y)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-6)


# -- errors -----------------------------------------------------------------------------------
def test_exact_refused_when_too_large():
    X = np.random.default_rng(0).standard_normal((300, 8))
    y = np.arange(300) % 2
    with pytest.raises(ValueError, match="arrangements='sample'"):
        ThresholdNetLasso(arrangements="exact").fit(X, y)


def test_bad_inputs():
    X, y = small_data("gaussian")
    with pytest.raises(ValueError, match="2 classes"):
        ThresholdNetLasso().fit(X, np.zeros(8))
    with pytest.raises(ValueError, match="complete arrangement"):
        ThresholdNetLasso(solver="closed_form").fit(X, y)
    with pytest.raises(ValueError, match="linear program"):
        ThresholdNetLasso(loss="hinge", solver="sklearn").fit(X, y)
    with pytest.raises(ValueError, match="hinge"):
        ThresholdNetLasso(loss="squared", solver="highs").fit(X, y)
    with pytest.raises(ValueError, match="positive integers"):
        ThresholdNetLasso(hidden_layer_sizes=(0,)).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        ThresholdNetLasso().fit(np.full((8, 2), np.nan), y)
    with pytest.raises(ValueError, match="beta"):
        ThresholdNetLasso(beta=-1.0).fit(X, y)


def test_convergence_warning_on_tiny_budget():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((40, 5))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    with pytest.warns(ConvergenceWarning, match="duality gap"):
        ThresholdNetLasso(beta=1e-3, solver="sklearn", max_iter=2, n_arrangements=200,
                          random_state=0).fit(X, y)


# -- regressions ------------------------------------------------------------------------------
def test_lars_breakdown_on_degenerate_design_falls_back():
    """scikit-learn's common check_sample_weights_list data: LARS broke down on this binary,
    rank-deficient design (a pattern plus its complement is the bias column) and returned
    coefficients ~1e13 (objective 4.8e10); the polish was warm started from that point.
    The fallback must reach the certified optimum of the same dictionary."""

    rnd = np.random.RandomState(0)
    X = rnd.uniform(size=(30, 3))
    y = np.arange(30) % 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = ThresholdNetLasso(n_arrangements=50, arrangements="sample",
                                random_state=0).fit(X, y, sample_weight=[3] * 30)
    Y = np.where(y[:, None] == clf.classes_, 1.0, -1.0)
    assert clf.objective_ < 0.5 * 3 * Y.size * 1e-1
    assert clf.dual_gap_ <= 1e-6 * 0.5 * 3 * Y.size
    # the same optimum on the weighted problem as on the repeated one
    ref = ThresholdNetLasso(n_arrangements=50, arrangements="sample", random_state=0).fit(
        np.repeat(X, 3, axis=0), np.repeat(y, 3))
    assert clf.objective_ == pytest.approx(ref.objective_, rel=1e-6)
    # an independent solver (FISTA) agrees with the LARS chain on a degenerate design
    D = np.vstack([sample_patterns(X, 50, np.random.default_rng(s)).patterns[:10, :12]
                   for s in range(3)]).astype(float)
    ys = np.where(np.arange(30) % 3 == 1, 1.0, -1.0)
    w, *_ = solve_lasso(D, ys, 1e-3, "squared", "lars", np.full(30, 3.0))
    ref = lasso_reference(D, ys, 1e-3 / 3.0) * 3.0
    p, _ = duality_gap(D, ys, w, 1e-3, "squared", np.full(30, 3.0))
    assert p == pytest.approx(ref, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("kind", ["gaussian", "degenerate", "rank_deficient"])
def test_ipm_solver_matches_brute_force_with_a_sparse_network(kind):
    X, y = small_data(kind)
    clf = ThresholdNetLasso(beta=0.05, arrangements="exact", solver="ipm").fit(X, y)
    D = brute_force_patterns(X).astype(float)
    ref = lasso_reference(D, 2.0 * y - 1.0, 0.05)
    assert clf.solver_ == "ipm" and clf.is_optimal_
    assert clf.objective_ == pytest.approx(ref, rel=1e-7, abs=1e-9)
    # a vertex of the optimal face, not the interior-point method's dense solution
    assert 1 <= clf.n_neurons_ <= np.linalg.matrix_rank(D) < D.shape[1]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", [(12, 40), (40, 12)])
def test_ipm_on_random_degenerate_designs(seed, shape):
    """Both Newton systems (on the points when n <= P, on the patterns otherwise) on
    designs with duplicate, complementary and all-ones columns, tied rows and weights."""
    rng = np.random.default_rng(seed)
    n, P = shape
    D = (rng.random((n, P)) < 0.5).astype(float)
    D[:, 0] = 1.0
    D[:, 1] = D[:, 2]
    D[:, 3] = 1.0 - D[:, 4]
    D[1] = D[0]
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    s = rng.integers(1, 4, n).astype(float)
    beta = [1e-3, 0.1, 1.0][seed % 3]
    w, _, primal, gap, ok = solve_lasso(D, y, beta, "squared", "ipm", s, tol=1e-8)
    r = np.sqrt(s)
    ref = lasso_reference(D * r[:, None], y * r, beta)
    assert ok and gap <= 1e-8 * 0.5 * s.sum()
    assert primal == pytest.approx(ref, rel=1e-7, abs=1e-9)
    assert primal == pytest.approx(0.5 * s @ (D @ w - y) ** 2 + beta * np.abs(w).sum(),
                                   rel=1e-12)
    assert np.count_nonzero(w) <= np.linalg.matrix_rank(D)


def test_duplicated_points_certified_by_both_solvers():
    """check_sample_weights_shape's data (4 distinct points, each 4 times): HiGHS's
    active-set QP cycled forever on its 13-pattern design (the reason it was replaced by
    the interior-point method). Coordinate descent and the default reach the same optimum."""
    X = np.repeat(np.array([[1, 3], [2, 1], [3, 3], [4, 1]], float), 4, axis=0)
    y = np.repeat([1, 2, 1, 2], 4)
    clf = ThresholdNetLasso(n_arrangements=50, arrangements="sample", random_state=0,
                            solver="sklearn", tol=1e-9, max_iter=100000).fit(X, y)
    chain = ThresholdNetLasso(n_arrangements=50, arrangements="sample",
                              random_state=0).fit(X, y)
    loss0 = 0.5 * len(y)
    assert chain.dual_gap_ <= 1e-6 * loss0
    # both certificates bracket the same optimum, within the default tol
    assert chain.objective_ - chain.dual_gap_ <= clf.objective_ + 1e-12
    assert clf.objective_ - clf.dual_gap_ <= chain.objective_ + 1e-12
    assert abs(chain.objective_ - clf.objective_) <= 1e-6 * loss0


def test_default_fit_certified_on_degenerate_bundled_data():
    """bloodtransfer: 748 samples, 502 distinct, rank 3 (Monetary = 250 x Frequency), about
    900 sampled patterns at beta=1e-3. LARS broke down there and coordinate descent
    stopped at a duality gap of 0.22 on an objective of 0.26."""
    X, y = load_dataset("bloodtransfer", return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = ThresholdNetLasso(random_state=0).fit(X, y)
    assert clf.solver_ == "ipm"
    assert clf.dual_gap_ <= 1e-6 * 0.5 * len(y)
    assert clf.n_neurons_ <= len(np.unique(X, axis=0))
    f = clf.decision_function(X)
    ys = np.where(y == clf.classes_[1], 1.0, -1.0)
    assert 0.5 * np.sum((f - ys) ** 2) + 1e-3 * np.abs(clf.coef_).sum() == pytest.approx(
        clf.objective_, rel=1e-9)


def test_ipm_too_large_is_refused_before_starting(monkeypatch):
    monkeypatch.setattr(solvers_module, "IPM_MAX_ENTRIES", 10)
    X, y = small_data("gaussian")
    with pytest.raises(ValueError, match="solver='ipm'.*Newton matrix.*solver='lars'"):
        ThresholdNetLasso(arrangements="exact", solver="ipm").fit(X, y)
    # "auto" goes to LARS instead
    assert ThresholdNetLasso(arrangements="exact").fit(X, y).solver_ == "lars"


# -- issue 13: certificates re-checked on the returned model, no crash on valid data ----------
def _issue_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    return X, (X[:, 0] + 0.5 * rng.normal(size=30) > 0).astype(int)


def _certificate_holds(est, X, y, sw=None, tol_abs=1e-9):
    """Re-check a fitted model's certificate independently: its objective recomputed from
    its outputs, and ``objective_ - dual_gap_`` at most the optimum over all networks
    (brute-force dictionary, FISTA reference); when ``is_optimal_``, the optimum is within
    ``tol`` of ``objective_``."""
    sw = np.ones(len(X)) if sw is None else np.asarray(sw, float)
    if hasattr(est, "classes_"):
        F = est.decision_function(X)
        Y = (np.where(y == est.classes_[1], 1.0, -1.0)[:, None] if F.ndim == 1
             else np.where(y[:, None] == est.classes_, 1.0, -1.0))
        F = F[:, None] if F.ndim == 1 else F
    else:
        F = np.asarray(est.predict(X)).reshape(len(X), -1)
        Y = np.asarray(y, float).reshape(len(X), -1)
    obj = 0.5 * np.sum(sw[:, None] * (F - Y) ** 2) + est.beta * np.abs(est.coef_).sum()
    assert obj == pytest.approx(est.objective_, rel=1e-9, abs=1e-12)
    keep = sw > 0
    D = brute_force_patterns(X[keep]).astype(float)
    r = np.sqrt(sw[keep])
    opt = sum(lasso_reference(D * r[:, None], Y[keep, k] * r, est.beta)
              for k in range(Y.shape[1]))
    assert est.objective_ >= opt - tol_abs
    assert est.objective_ - est.dual_gap_ <= opt + tol_abs
    if est.is_optimal_:
        assert est.objective_ - opt <= est.tol * 0.5 * np.sum(sw[:, None] * Y**2) + tol_abs


def test_closed_form_optimality_is_checked_not_assumed(monkeypatch):
    """Issue 13 item 3: the closed-form path set is_optimal_=True without its gap. A wrong
    closed form (here: half the optimal output) must be caught by the certificate."""
    from exactclf.threshold import _lasso

    monkeypatch.setattr(_lasso, "closed_form_fit", lambda y, beta: 0.5 * closed_form_fit(y, beta))
    rng = np.random.default_rng(1)
    X = rng.standard_normal((5, 7))
    y = np.array([0, 1, 1, 0, 1])
    with pytest.warns(ConvergenceWarning, match="not certified optimal"):
        clf = ThresholdNetLasso(beta=0.05).fit(X, y)
    assert clf.arrangements_ == "closed_form" and not clf.is_optimal_
    _certificate_holds(clf, X, y)


def test_dual_point_outside_the_conjugate_domain_raises():
    """Issue 13 item 3: duality_gap clipped an out-of-range dual point and evaluated the dual
    objective at the clipped point, whose feasibility was never checked."""
    D = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    y = np.array([1.0, -1.0, 1.0])
    s = np.ones(3)
    w = np.zeros(2)
    for loss, theta in [("hinge", np.array([3.0, -0.1, 0.2])),
                        ("logistic", np.array([-0.5, -0.1, 0.2]))]:
        with pytest.raises(ValueError, match="outside the domain"):
            duality_gap(D, y, w, 0.1, loss, s, theta=theta)
    # inside the domain but above the penalty: scaled, and the bound is valid
    theta = np.array([1.0, -1.0, 1.0])
    for loss in ("squared", "logistic", "hinge"):
        primal, gap = duality_gap(D, y, w, 0.1, loss, s, theta=theta * (0.5 if loss ==
                                                                        "logistic" else 1))
        lower = primal - gap
        rng = np.random.default_rng(0)
        for _ in range(50):
            p, _ = duality_gap(D, y, rng.standard_normal(2), 0.1, loss, s)
            assert lower <= p + 1e-12


@pytest.mark.parametrize("tol", [1e-12, 1e-14])
def test_tiny_tol_does_not_crash(tol):
    """Issue 13 item 7: tol=1e-12 raised LinAlgError in the interior-point Cholesky; a tol
    below the floating-point floor ends with a warning and the best certified gap."""
    X, y = _issue_data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = ThresholdNetLasso(tol=tol, arrangements="exact").fit(X, y)
    if not clf.is_optimal_:
        assert any(issubclass(c.category, ConvergenceWarning) for c in caught)
    assert clf.dual_gap_ <= 1e-10 * 0.5 * len(y)
    ref = ThresholdNetLasso(tol=1e-9, arrangements="exact").fit(X, y)
    assert clf.objective_ == pytest.approx(ref.objective_, rel=1e-7)
    assert clf.objective_ - clf.dual_gap_ <= ref.objective_ + 1e-12


def test_ipm_failure_falls_back_and_certifies(monkeypatch):
    """Item 7: when the interior-point solver returns no usable point (non-finite), the
    fallback chain certifies the optimum; nothing is taken from the failed solve."""
    import piqp

    class Broken:
        def __init__(self):
            self.settings = SimpleNamespace()

        def setup(self, P, c, G, h_l, h_u):
            n, m = len(c), G.shape[0]
            self.result = SimpleNamespace(x=np.full(n, np.nan), z_u=np.zeros(m),
                                          z_l=np.zeros(m), s_u=np.ones(m), s_l=np.ones(m),
                                          info=SimpleNamespace(iter=1))

        def solve(self):
            return None

    monkeypatch.setattr(piqp, "DenseSolver", Broken)
    X, y = small_data("gaussian")
    clf = ThresholdNetLasso(beta=0.05, arrangements="exact", solver="ipm", tol=1e-9,
                            max_iter=100000).fit(X, y)
    assert clf.is_optimal_
    _certificate_holds(clf, X, y)


# three points of np.random.RandomState(1).randn(150, 2), nearly collinear: separating the
# middle one from the others has a margin of about 1e-5 (the max-margin step raised)
THIN = np.random.RandomState(1).randn(150, 2)[[29, 104, 148]]


@pytest.mark.parametrize("solver", ["auto", "ipm"])
def test_thin_margin_pattern_is_realized(solver):
    """Issue 13 item 4: ThresholdNetLasso(arrangements='exact') raised RuntimeError 'not
    strictly linearly separable' on a thin-margin pattern (3 of 4 random 150 x 2 sets)."""
    y = np.array([0, 1, 1])
    clf = ThresholdNetLasso(beta=1e-3, arrangements="exact", solver=solver).fit(THIN, y)
    np.testing.assert_array_equal(clf.predict(THIN), y)
    _certificate_holds(clf, THIN, y)


def test_unrealizable_neuron_is_repaired_not_certified(monkeypatch):
    """Item 4: a pattern float64 cannot realize keeps the separator's best plane; the
    certificate is recomputed on the returned network (never claimed from the solver's)."""
    from exactclf import _separator
    from exactclf.threshold import _reconstruction

    real = _separator.max_margin_separator

    def flaky(Z, positive):
        a, b = real(Z, positive)
        if positive[0]:  # pretend the patterns holding point 0 are out of float64's reach
            shifted = b - 0.5 * abs(b) - 1.0
            raise _separator.UnrealizableLabeling("thin", (a, shifted), Z @ a + shifted > 0, 1)
        return a, b

    monkeypatch.setattr(_reconstruction, "max_margin_separator", flaky)
    X, y = small_data("gaussian")
    y = np.zeros(8, int)
    y[[0, 5]] = 1
    with pytest.warns(ConvergenceWarning, match="float64"):
        clf = ThresholdNetLasso(beta=0.01, arrangements="exact", **FAST).fit(X, y)
    assert not clf.is_optimal_
    _certificate_holds(clf, X, y)


@pytest.mark.parametrize("transform", [lambda X: X + 1e10, lambda X: X * 1e-200,
                                       lambda X: X * [1.0, 1e-200] + [1e10, 0.0]])
def test_units_do_not_change_the_model(transform):
    """Issue 13 item 1: offsets of 1e10 on every feature or a scale of 1e-200 raised
    IndexError in the affine frame; the arrangement (and so the optimum) is unit-free."""
    X, y = _issue_data()
    ref = ThresholdNetLasso(arrangements="exact").fit(X, y)
    clf = ThresholdNetLasso(arrangements="exact").fit(transform(X), y)
    assert clf.is_optimal_ and ref.is_optimal_
    assert clf.n_patterns_ == ref.n_patterns_
    assert clf.objective_ == pytest.approx(ref.objective_, rel=1e-6)
    np.testing.assert_array_equal(clf.predict(transform(X)), ref.predict(X))


@pytest.mark.parametrize("case", ["identical", "merged", "zero_weights"])
def test_one_unique_point_gives_the_majority_model(case):
    """Issue 13 item 5: all rows identical (or one point left after merging duplicates or
    dropping zero weights): the majority-like model, certified."""
    rng = np.random.default_rng(0)
    y = np.array([0, 1, 1, 0, 1, 1, 1])
    sw = np.ones(7)
    if case == "identical":
        X = np.full((7, 3), 2.5)
    elif case == "merged":
        X = np.repeat([[1.0, -4.0]], 7, axis=0)
    else:
        X = rng.standard_normal((7, 2))
        X[[0, 1, 2]] = X[0]
        sw = np.array([1.0, 2.0, 1.0, 0, 0, 0, 0])
    clf = ThresholdNetLasso(beta=0.1).fit(X, y, sample_weight=sw)
    keep = sw > 0
    majority = 1 if sw[keep] @ y[keep] > sw[keep] @ (1 - y[keep]) else 0
    assert (clf.predict(X[keep]) == majority).all()
    assert clf.is_optimal_ and clf.n_neurons_ == 1
    # the optimum of 1/2 sum s (w - y)^2 + beta |w| over one constant output w
    ys = 2.0 * y[keep] - 1.0
    m = sw[keep] @ ys
    w = np.sign(m) * max(abs(m) - 0.1, 0.0) / sw[keep].sum()
    opt = 0.5 * sw[keep] @ (w - ys) ** 2 + 0.1 * abs(w)
    assert clf.objective_ == pytest.approx(opt, rel=1e-9)
    reg = ThresholdNetLassoRegressor(beta=0.1).fit(X, y * 3.0, sample_weight=sw)
    assert np.ptp(reg.predict(X)) == 0.0 and reg.is_optimal_


@pytest.mark.parametrize("Est", [ThresholdNetLasso, ThresholdNetLassoRegressor])
def test_failed_refit_leaves_an_unfitted_estimator(Est):
    """Issue 13 item 11: a failed refit kept the previous model's weights."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    X, y = small_data("gaussian")
    est = Est(beta=0.1, arrangements="exact").fit(X, y)
    X_bad = X.copy()
    X_bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(X_bad, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    assert not hasattr(est, "classes_") and not hasattr(est, "is_optimal_")


@pytest.mark.slow  # (12 s; CI runs the slow tests)
def test_skglm_is_installed_and_certified_like_the_others():
    """Issue 13 item 14: skglm is installed (CI too), so this must run: the default logistic
    path uses it, and the certificate (exactclf's own duality gap) does not depend on which
    solver ran."""
    assert skglm_available()
    X, y = small_data("gaussian", seed=3)
    a = ThresholdNetLasso(beta=0.1, arrangements="exact", loss="logistic", tol=1e-8).fit(X, y)
    assert a.solver_ == "skglm" and a.is_optimal_
    b = ThresholdNetLasso(beta=0.1, arrangements="exact", loss="logistic", solver="sklearn",
                          tol=1e-8, max_iter=100000).fit(X, y)
    for est, other in [(a, b), (b, a)]:
        assert est.objective_ - est.dual_gap_ <= other.objective_ + 1e-12
    # squared loss: skglm, scikit-learn and the default chain certify the same optimum
    fits = [ThresholdNetLasso(beta=0.05, arrangements="exact", solver=s, tol=1e-9,
                              max_iter=100000).fit(X, y) for s in ("skglm", "sklearn", "auto")]
    for est in fits:
        assert est.is_optimal_
        _certificate_holds(est, X, y)


def test_default_chain_falls_back_to_skglm_when_installed(monkeypatch):
    """Item 14: with skglm installed, the squared-loss chain's coordinate-descent fallback is
    skglm; its result is certified by exactclf's own gap."""
    calls = []
    real = solvers_module._solve_skglm

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(solvers_module, "_solve_ipm", lambda D, y, beta, s, target, it: (
        np.zeros(D.shape[1]), np.zeros(len(y)), np.zeros(D.shape[1], bool), 0, False))
    monkeypatch.setattr(solvers_module, "_solve_lars", lambda D, y, beta, s, it: (
        np.zeros(D.shape[1]), 0, False))
    monkeypatch.setattr(solvers_module, "_solve_skglm", spy)
    X, y = small_data("degenerate")
    clf = ThresholdNetLasso(beta=0.05, arrangements="exact", tol=1e-9, max_iter=100000).fit(
        X, y)
    assert calls and clf.solver_ == "ipm" and clf.is_optimal_
    _certificate_holds(clf, X, y)


def _awkward(rng, kind, n):
    if kind == "ties":
        X = rng.integers(0, 3, (n, 2)).astype(float)
    elif kind == "collinear":
        t = rng.integers(-3, 4, n).astype(float)
        X = np.column_stack([t, 2 * t + 1])
    elif kind == "offset":  # 2**-660 ~ 2e-199 scales exactly; 1e10 offsets subtract exactly
        X = rng.standard_normal((n, 2)) * [1.0, 2.0**-660] + [1e10, 0.0]
    else:
        X = rng.standard_normal((n, 2))
        X[1::3] = X[0]
    return X


@pytest.mark.parametrize("seed", range(12))
def test_generated_awkward_inputs_are_certified_or_refused(seed):
    """Issue 13: seeded awkward inputs (ties, duplicates, integer grids, collinear points,
    weights, offsets, conflicting labels): a clear error, or a model whose objective and
    dual_gap_ hold on an independent re-check."""
    rng = np.random.default_rng(seed)
    kind = ["ties", "collinear", "offset", "duplicates"][seed % 4]
    n = int(rng.integers(4, 8))
    X = _awkward(rng, kind, n)
    n_classes = 2 if seed % 3 else 3
    y = np.arange(n) % n_classes
    rng.shuffle(y)
    sw = rng.integers(0, 3, n).astype(float) if seed % 2 else None
    if sw is not None:
        sw[:n_classes] = 1.0  # every class keeps a positive weight
    beta = float(rng.choice([1e-3, 0.05, 0.5]))
    Xc = X - [1e10, 0.0] if kind == "offset" else X  # exact: same dichotomies
    if kind == "offset":
        Xc = Xc * [1.0, 2.0**660]
    for est in (ThresholdNetLasso(beta=beta, tol=1e-8),
                ThresholdNetLasso(beta=beta, arrangements="exact", tol=1e-8)):
        est.fit(X, y, sample_weight=sw)
        assert est.n_patterns_ >= 1
        _check_on(est, X, Xc, y, sw)
    reg = ThresholdNetLassoRegressor(beta=beta, arrangements="exact", tol=1e-8).fit(
        X, rng.standard_normal(n), sample_weight=sw)
    assert np.isfinite(reg.objective_) and reg.dual_gap_ >= 0


def _check_on(est, X, Xc, y, sw):
    """The certificate of ``est`` (fitted on ``X``) re-checked with the dictionary of
    ``Xc``, a copy with the same dichotomies in well-scaled units."""
    class View:
        pass

    view = View()
    view.classes_, view.beta, view.tol = est.classes_, est.beta, est.tol
    view.coef_, view.objective_ = est.coef_, est.objective_
    view.dual_gap_, view.is_optimal_ = est.dual_gap_, est.is_optimal_
    view.decision_function = lambda _: est.decision_function(X)
    _certificate_holds(view, Xc, y, sw)
