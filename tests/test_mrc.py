"""MRCCCG: constraint/column generation reaches the full LP's minimax risk, certified.

The reference ``R*`` is the 0-1 MRC LP written out from its definition here (every sample,
every nonempty label subset, dense) and solved by ``scipy.optimize.linprog``: no code of the
package builds it.
"""

import dataclasses
import itertools
import os
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from _helpers import hide_module
from scipy.optimize import linprog
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.preprocessing import PolynomialFeatures, StandardScaler
from sklearn.utils._param_validation import InvalidParameterError
from threadpoolctl import ThreadpoolController, threadpool_info

from exactclf._backend import CPU, REFERENCE
from exactclf._certificate import StopReason
from exactclf.mrc import MRCCCG, mrc_full_lp, mrc_statistics
from exactclf.mrc._bounds import dual_lower_bound, most_violated, most_violated_bruteforce
from exactclf.mrc._ccg import mrc_ccg
from exactclf.mrc._ipm import numpy_blas_serial
from exactclf.mrc._kernels import subset_weights, thresholds_cpu
from exactclf.mrc._lp import (
    GurobiLicenceError,
    GurobiLP,
    HighsLP,
    SolverFallbackWarning,
    make_lp,
)
from exactclf.mrc._phi import fit_feature_map

EXACT = dict(eps1=1e-9, tol=1e-9, random_state=0)


def _data(n, K, d=4, seed=0):
    X, y = make_classification(n, d, n_informative=min(d, 4), n_redundant=0, n_classes=K,
                               n_clusters_per_class=1, class_sep=0.8, random_state=seed)
    return StandardScaler().fit_transform(X), y


def _definition(Psi, y, K, s):
    """``Psi`` with each column divided by its largest magnitude, those magnitudes, and ``tau``
    (mean of ``Phi(x_i, y_i)``, ``Phi(x, c) = e_c (x) psi(x)``) and ``lam = s * std / sqrt(n)``
    (population std) in those scaled coordinates. ``R(mu)`` and ``R*`` do not depend on the
    scaling (``tau`` and ``lam`` scale with a column, ``mu`` inversely); it keeps the LP well
    scaled and the statistics finite for any units."""
    Psi = np.asarray(Psi, dtype=np.float64)
    top = np.abs(Psi).max(axis=0)
    top = np.where(top > 0, top, 1.0)
    Psi = Psi / top
    n, d = Psi.shape
    Phi_true = np.zeros((n, K * d))
    for i in range(n):
        Phi_true[i, y[i] * d:(y[i] + 1) * d] = Psi[i]
    return Psi, np.tile(top, K), Phi_true.mean(axis=0), s * Phi_true.std(axis=0) / np.sqrt(n)


def _reference_lp(Psi, y, K, s, rows=None):
    """The 0-1 MRC LP from its definition, solved by SciPy's HiGHS:

        min  -(tau - lam)^T mu1 + (tau + lam)^T mu2 + nu
        s.t. sum_{c in C} Phi(x_i, c)^T (mu1 - mu2) / |C| - nu <= 1/|C| - 1
             for every sample i (of ``rows``; default all) and nonempty subset C,
             mu1, mu2 >= 0,

    in the scaled coordinates of :func:`_definition` (``tau``, ``lam`` over all samples).
    Returns ``R`` (the optimum), ``mu``, ``tau``, ``lam``, the scaled ``Psi`` and, per LP
    row, its sample, subset mask and dual weight ``alpha >= 0``."""
    Psi, _, tau, lam = _definition(Psi, y, K, s)
    n, d = Psi.shape
    m = K * d
    samples = np.arange(n) if rows is None else np.asarray(rows)
    A, b, row_sample, row_mask = [], [], [], []
    for size in range(1, K + 1):
        for C in itertools.combinations(range(K), size):
            F = np.zeros((len(samples), m))
            for c in C:
                F[:, c * d:(c + 1) * d] = Psi[samples] / size
            A.append(np.hstack([F, -F, -np.ones((len(samples), 1))]))
            b.append(np.full(len(samples), 1.0 / size - 1.0))
            row_sample.append(samples)
            mask = np.zeros(K, dtype=bool)
            mask[list(C)] = True
            row_mask.append(np.tile(mask, (len(samples), 1)))
    res = linprog(np.r_[-(tau - lam), tau + lam, 1.0], A_ub=np.vstack(A), b_ub=np.concatenate(b),
                  bounds=[(0, None)] * (2 * m) + [(None, None)], method="highs",
                  options=dict(primal_feasibility_tolerance=1e-10,
                               dual_feasibility_tolerance=1e-10))
    assert res.status == 0, res.message
    return SimpleNamespace(R=res.fun, mu=res.x[:m] - res.x[m:2 * m], tau=tau, lam=lam,
                           Psi=Psi, row_sample=np.concatenate(row_sample),
                           row_mask=np.vstack(row_mask), alpha=-res.ineqlin.marginals)


def _psi(clf, X):
    """psi(x) of a fitted estimator; for ``phi="linear"`` written out here, (1, x) or x."""
    if isinstance(clf.phi, str) and clf.phi == "linear":
        X = np.asarray(X, dtype=np.float64)
        return np.c_[np.ones(len(X)), X] if clf.fit_intercept else X
    return clf._psi(X)


def _full_lp_R(clf, X, y):
    """R* of the full LP (every sample, every label subset) in ``clf``'s features."""
    y_idx = np.searchsorted(clf.classes_, y)
    return _reference_lp(_psi(clf, X), y_idx, len(clf.classes_), clf.s).R


def _exact_R(clf, X, y):
    """R(mu_) from its definition (``tau``, ``lam`` recomputed, all 2^K - 1 subsets
    enumerated); returns ``(R, nu)``."""
    K = len(clf.classes_)
    Psi = _psi(clf, X)
    _, top, tau, lam = _definition(Psi, np.searchsorted(clf.classes_, y), K, clf.s)
    mu = clf.mu_ * top  # in the scaled coordinates of tau and lam
    nu = most_violated_bruteforce(Psi @ clf.mu_.reshape(K, -1).T).max()
    return -tau @ mu + lam @ np.abs(mu) + nu, nu


def _assert_certified(clf, X, y, atol=1e-7):
    """``lower_ <= R* <= upper_`` against the reference LP, ``upper_ = R(mu_)``, and the
    randomized (deterministic) rule's training error at most ``upper_`` (twice it)."""
    R_star = _full_lp_R(clf, X, y)
    assert clf.lower_ <= R_star + atol
    assert clf.upper_ >= R_star - atol
    R, _ = _exact_R(clf, X, y)
    assert clf.upper_ == pytest.approx(R, rel=1e-9, abs=1e-9)
    y_idx = np.searchsorted(clf.classes_, y)
    proba = clf.predict_proba(X)
    assert 1.0 - proba[np.arange(len(y)), y_idx].mean() <= clf.upper_ + 1e-9
    assert np.mean(clf.predict(X) != y) <= 2.0 * clf.upper_ + 1e-9
    return R_star


# ------------------------------------------------------------------ most violated subset
@pytest.mark.parametrize("K", [1, 2, 3, 5, 8])
def test_most_violated_matches_enumeration_on_every_backend(K):
    rng = np.random.default_rng(K)
    V = rng.normal(size=(300, K))
    V[:20] = np.round(V[:20])  # ties
    ref = most_violated_bruteforce(V)
    g_cpu, size_cpu = most_violated(V, CPU)
    g_ref, size_ref = most_violated(V, REFERENCE)
    np.testing.assert_allclose(g_cpu, ref, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(g_cpu, g_ref)  # identical across backends
    np.testing.assert_array_equal(size_cpu, size_ref)
    # the subset of the reported size made of the largest scores attains the maximum
    top = -np.sort(-V, axis=1)
    attained = (np.take_along_axis(np.cumsum(top, axis=1), size_cpu[:, None] - 1, 1)[:, 0]
                - 1.0) / size_cpu + 1.0
    np.testing.assert_allclose(attained, ref, atol=1e-12)


@pytest.mark.parametrize("K", [23, 24, 50, 100, 200])
def test_most_violated_with_many_classes_is_the_full_sorted_scan(K):
    # from 24 classes the CPU kernel sorts only the scores near the threshold: bit for bit
    # the array-generic full sort's result, on ties, zeros, huge offsets and scales
    rng = np.random.default_rng(K)
    V = rng.normal(size=(2000, K)) * 10.0 ** rng.uniform(-3, 3, size=(2000, 1))
    V += 10.0 ** rng.uniform(-3, 6, size=(2000, 1)) * rng.choice([-1, 1], size=(2000, 1))
    V[:300] = np.round(V[:300])
    V[300:600, :K // 2] = V[300:600, :1]
    V[600:700] = 0.0
    g_cpu, size_cpu = most_violated(V, CPU)
    g_ref, size_ref = most_violated(V, REFERENCE)
    np.testing.assert_array_equal(g_cpu, g_ref)
    np.testing.assert_array_equal(size_cpu, size_ref)


@pytest.mark.parametrize("K", [2, 10, 50, 200])
def test_smoothing_thresholds_are_the_most_violated_subsets(K):
    # the smoothed start's kernel (Michelot's threshold, sums reassociated) against the
    # certified kernel: the same sizes, thresholds equal up to rounding at each row's scale
    rng = np.random.default_rng(K)
    V = rng.normal(size=(2000, K)) * 10.0 ** rng.uniform(-3, 3, size=(2000, 1))
    V += 10.0 ** rng.uniform(-3, 6, size=(2000, 1)) * rng.choice([-1, 1], size=(2000, 1))
    V[:300] = np.round(V[:300])
    V[300:600, :max(K // 2, 1)] = V[300:600, :1]
    V[600:700] = 0.0
    g, size = most_violated(V, CPU)
    t, count = thresholds_cpu(V)
    scale = np.abs(V).max(axis=1) + 1.0
    assert np.all(np.abs(t - (g - 1.0)) <= 1e-13 * scale)
    np.testing.assert_array_equal(count, size)
    w = rng.random(len(V))
    np.testing.assert_array_equal(subset_weights(V, t, w), (V > t[:, None]) * w[:, None])


def test_numpy_blas_serial_limits_numpy_s_blas_only():
    # numpy's BLAS on one thread inside, scipy's (where it is another library) untouched,
    # everything restored after
    before = {i["filepath"]: i["num_threads"] for i in threadpool_info()
              if i["user_api"] == "blas"}
    root = os.path.realpath(os.path.dirname(np.__file__))
    own = {f for f in before if os.path.realpath(f).startswith(root)}
    separate = bool(own) and len(own) < len(before)
    with numpy_blas_serial():
        inside = {c.filepath: c.num_threads
                  for c in ThreadpoolController().select(user_api="blas").lib_controllers}
    for f, n in inside.items():
        assert n == (before[f] if separate and f not in own else 1)
    after = {i["filepath"]: i["num_threads"] for i in threadpool_info()
             if i["user_api"] == "blas"}
    assert after == before


@pytest.mark.parametrize("K", [2, 3])
def test_estimator_definitions_match_the_issue(K):
    """Phi(x, y) = e_y (x) (1, x) for every K (binary included), tau its mean, lambda
    s * (population std) / sqrt(n), and scores Phi(x, y)^T mu_."""
    X, y = _data(70, K, d=3, seed=K)
    clf = MRCCCG(s=0.7).fit(X, y)
    n, d = len(X), 1 + X.shape[1]
    Phi = np.zeros((n, K, K * d))
    for c in range(K):
        Phi[:, c, c * d:(c + 1) * d] = np.c_[np.ones(n), X]
    Phi_true = Phi[np.arange(n), y]
    assert clf.mu_.shape == (K * d,) and clf.n_phi_features_ == d
    np.testing.assert_allclose(clf.tau_, Phi_true.mean(axis=0), atol=1e-13)
    np.testing.assert_allclose(clf.lambda_, 0.7 * Phi_true.std(axis=0, ddof=0) / np.sqrt(n),
                               atol=1e-13)
    V = Phi @ clf.mu_
    dec = clf.decision_function(X)
    np.testing.assert_allclose(dec, V[:, 1] - V[:, 0] if K == 2 else V, atol=1e-12)
    # R(mu_) of the definition: -tau^T mu + lambda^T |mu| + max over samples and subsets
    R = -clf.tau_ @ clf.mu_ + clf.lambda_ @ np.abs(clf.mu_) + most_violated_bruteforce(V).max()
    assert clf.upper_ == pytest.approx(R, abs=1e-10)


def test_statistics_match_the_definition():
    X, y = _data(50, 3)
    Psi = np.c_[np.ones(len(X)), X]
    tau, lam = mrc_statistics(Psi, y, 3, 0.3)
    Phi = np.zeros((len(X), 3 * Psi.shape[1]))
    for i, (p, c) in enumerate(zip(Psi, y, strict=True)):
        Phi[i, c * Psi.shape[1]:(c + 1) * Psi.shape[1]] = p
    np.testing.assert_allclose(tau, Phi.mean(axis=0), atol=1e-14)
    np.testing.assert_allclose(lam, 0.3 * Phi.std(axis=0) / np.sqrt(len(X)), atol=1e-14)


# ----------------------------------------------------------------- R* equals the full LP
@pytest.mark.parametrize("phi", ["linear", "fourier", "relu", "threshold"])
@pytest.mark.parametrize("K", [2, 4])
def test_minimax_risk_equals_full_lp(phi, K):
    X, y = _data(90, K, seed=K)
    clf = MRCCCG(phi=phi, n_components=12, n_max=15, **EXACT).fit(X, y)
    R_full = _full_lp_R(clf, X, y)
    assert clf.converged_
    assert abs(clf.upper_ - R_full) < 1e-6
    assert clf.lower_ <= R_full + 1e-7 and clf.lower_ >= R_full - 1e-6
    assert clf.upper_ - clf.lower_ <= 1e-6


@pytest.mark.parametrize("phi", ["linear", "fourier", "relu", "threshold"])
def test_minimax_risk_equals_full_lp_ten_classes(phi):
    rng = np.random.default_rng(3)
    y = np.arange(24) % 10
    X = rng.normal(size=(24, 2)) + np.c_[np.cos(y), np.sin(y)]
    clf = MRCCCG(phi=phi, n_components=4, **EXACT).fit(X, y)
    assert len(clf.classes_) == 10
    assert clf.converged_
    assert abs(clf.upper_ - _full_lp_R(clf, X, y)) < 1e-6


def test_every_sample_is_used_beyond_five_thousand():
    """No subsample: far-out samples at the end of a 6000-sample set change R*."""
    rng = np.random.default_rng(0)
    n = 6000
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 2)) + (2.0 * y[:, None] - 1.0)
    X[-20:] *= -4.0
    clf = MRCCCG(**EXACT).fit(X, y)
    R_full = _full_lp_R(clf, X, y)
    assert abs(clf.upper_ - R_full) < 1e-6
    # the LP restricted to the rows of the first 5000 samples has a clearly lower optimum
    assert _reference_lp(_psi(clf, X), y, 2, clf.s, rows=np.arange(5000)).R < R_full - 0.05


@pytest.mark.parametrize("K", [2, 3, 4])
def test_package_full_lp_matches_the_definition(K):
    """``mrc_full_lp`` (the package's full LP, used by benchmarks) against the reference."""
    X, y = _data(40, K, seed=K)
    Psi = np.c_[np.ones(len(X)), X]
    ref = _reference_lp(Psi, y, K, 0.3)
    tau, lam = mrc_statistics(ref.Psi, y, K, 0.3)
    np.testing.assert_allclose(tau, ref.tau, atol=1e-14)
    np.testing.assert_allclose(lam, ref.lam, atol=1e-14)
    assert mrc_full_lp(ref.Psi, y, K, tau, lam, tol=1e-9).objective == pytest.approx(ref.R,
                                                                                     abs=1e-8)


def test_box_on_a_flat_optimal_face_ends_the_generation():
    """ReLU features of random labels leave directions of zero cost, where the simplex may
    stop at the box's bound without the box mattering: the box must not grow without end
    (it grew to 1e17 and HiGHS failed), and R* is the full LP's."""
    rng = np.random.default_rng(20)
    n, d, K = int(rng.integers(10, 120)), int(rng.integers(1, 5)), int(rng.integers(2, 5))
    X = rng.normal(size=(n, d))
    y = rng.integers(0, K, size=n)
    clf = MRCCCG(phi="relu", n_components=10, n_max=int(rng.integers(1, 30)),
                 **{**EXACT, "random_state": 20}).fit(X, y)
    assert clf.n_iter_ < 30 and clf.upper_ - clf.lower_ <= 1e-8
    assert abs(clf.upper_ - _full_lp_R(clf, X, y)) < 1e-7


@pytest.mark.parametrize("seed", range(30))
def test_awkward_data_against_the_full_lp(seed):
    """Integer grids, duplicated rows, huge offsets with tiny spreads, collinear features,
    random labels, each feature map, few rows per iteration: the certificate brackets the
    full LP's R* (built from the definition) and meets it."""
    rng = np.random.default_rng(seed)
    n, d, K = int(rng.integers(10, 90)), int(rng.integers(1, 5)), int(rng.integers(2, 5))
    X = rng.normal(size=(n, d))
    kind = seed % 5
    if kind == 1:
        X = np.round(2 * X)
    elif kind == 2:
        X = np.repeat(X[: n // 3 + 1], 3, axis=0)[:n]
    elif kind == 3:
        X = 1e6 + 1e-6 * X
    elif kind == 4:
        X[:, 0] = 2.0 * X[:, -1]
    y = rng.integers(0, K, size=len(X))
    if len(np.unique(y)) < 2:
        y[:2] = [0, 1]
    phi = ("linear", "fourier", "relu")[seed % 3]
    clf = MRCCCG(phi=phi, n_components=10, n_max=int(rng.integers(1, 30)), **EXACT).fit(X, y)
    R_star = _full_lp_R(clf, X, y)
    assert clf.lower_ - 1e-7 <= R_star <= clf.upper_ + 1e-7
    assert clf.upper_ - R_star < 1e-6


def test_deleted_rows_keep_the_certificates_exact():
    """Inactive rows are deleted from the LP (and the box step moves its bounds), yet every
    iterate's dual bound stays below R*, lower_ is the best of them and R* is exact."""
    X, y = _data(3000, 3, seed=5)
    clf = MRCCCG(n_max=20, **EXACT).fit(X, y)
    assert clf.n_lp_rows_ < clf.n_constraints_  # rows were deleted
    # the certificate's dual point is the generation's last, priced again: equal to rounding
    assert clf.lower_ >= max(clf.lower_history_) - 1e-12
    assert np.all(np.array(clf.lower_history_) <= clf.upper_ + 1e-9)
    assert abs(clf.upper_ - _full_lp_R(clf, X, y)) < 1e-6
    assert clf.upper_ - clf.lower_ <= 1e-6


def test_column_generation_reaches_full_lp():
    X, y = _data(80, 3, seed=1)
    clf = MRCCCG(phi="fourier", n_components=20, m_max=8, **EXACT).fit(X, y)
    assert 8 <= clf.n_active_features_ <= 3 * 21
    R_star = _full_lp_R(clf, X, y)
    assert abs(clf.upper_ - R_star) < 1e-6
    assert R_star - 1e-6 <= clf.lower_ <= R_star + 1e-9


def test_transformer_as_phi():
    X, y = _data(60, 2, d=3)
    clf = MRCCCG(phi=PolynomialFeatures(degree=2, include_bias=False), **EXACT).fit(X, y)
    assert clf.n_phi_features_ == 1 + 9
    assert abs(clf.upper_ - _full_lp_R(clf, X, y)) < 1e-6


def test_reference_backend_gives_the_same_model():
    """The array-generic (GPU) code path, run on NumPy, finds the same optimum."""
    X, y = _data(120, 3, seed=2)
    Psi = np.c_[np.ones(len(X)), X]
    tau, lam = mrc_statistics(Psi, y, 3, 0.3)
    a = mrc_ccg(Psi, y, 3, tau, lam, eps1=1e-9, tol=1e-9, backend=CPU)
    b = mrc_ccg(Psi, y, 3, tau, lam, eps1=1e-9, tol=1e-9, backend=REFERENCE)
    assert a.n_iter == b.n_iter and a.n_constraints == b.n_constraints
    np.testing.assert_allclose(a.mu, b.mu, atol=1e-12)
    assert a.upper == b.upper


# -------------------------------------------------------------------- the certificate
@pytest.mark.parametrize("phi, K", [("linear", 2), ("linear", 5), ("fourier", 3),
                                    ("threshold", 2)])
def test_certified_risk_bounds_training_error_of_randomized_rule(phi, K):
    X, y = _data(150, K, seed=5)
    clf = MRCCCG(phi=phi, n_components=30, random_state=0).fit(X, y)  # default eps1
    R, nu = _exact_R(clf, X, y)
    assert clf.upper_ == pytest.approx(R, abs=1e-10)
    assert clf.nu_ == pytest.approx(nu, abs=1e-10)
    assert clf.lower_ <= clf.upper_ <= clf.lower_ + clf.eps1 + 1e-9
    proba = clf.predict_proba(X)
    expected_error = 1.0 - proba[np.arange(len(y)), np.searchsorted(clf.classes_, y)].mean()
    assert expected_error <= clf.upper_ + 1e-12
    # the best certified point: an iterate, or better (on a segment between iterates)
    assert clf.upper_ == clf.upper_history_[-1] <= min(clf.R_history_)
    assert len(clf.R_history_) == len(clf.upper_history_) == clf.n_iter_


def test_max_iter_warns_and_stays_certified():
    X, y = _data(200, 3, seed=6)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        clf = MRCCCG(max_iter=2, n_max=5).fit(X, y)
    assert not clf.converged_ and clf.n_iter_ == 2
    R, _ = _exact_R(clf, X, y)
    assert clf.upper_ == pytest.approx(R, abs=1e-10)
    R_star = _full_lp_R(clf, X, y)
    assert 0.0 <= clf.lower_ <= R_star + 1e-9 <= clf.upper_ + 2e-9
    assert np.all(np.array(clf.lower_history_) <= R_star + 1e-9)
    proba = clf.predict_proba(X)
    assert 1 - proba[np.arange(len(y)), y].mean() <= clf.upper_ + 1e-12


# -------------------------------------------------------------------- the lower bound
def _lam_zero_data(n, K, seed):
    """Data where feature 0 vanishes on class 0, so some coordinates have lambda = 0."""
    X, y = _data(n, K, d=3, seed=seed)
    X[y == 0, 0] = 0.0
    return X, y


@pytest.mark.parametrize("seed", [0, 2, 4])
@pytest.mark.parametrize("eps1, eps2", [(1e-9, 1e-2), (1e-9, 1e-5), (1e-2, 1e-2)])
def test_lower_bound_is_rigorous_under_column_generation(seed, eps1, eps2):
    """Columns priced only to eps2 used to leave lower_ (the restricted LP's value) above R*
    (by 1e-3 at eps2=1e-2); lower_ now prices every feature."""
    X, y = make_classification(60, 5, n_informative=3, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=seed)
    clf = MRCCCG(phi="fourier", n_components=40, m_max=10, eps1=eps1, eps2=eps2, tol=1e-9,
                 random_state=0).fit(X, y)
    assert clf.n_active_features_ < 3 * 41  # column generation left features out
    R_star = _assert_certified(clf, X, y, atol=1e-9)
    assert clf.upper_ - clf.lower_ <= eps1 + 1e-8
    assert np.all(np.array(clf.lower_history_) <= R_star + 1e-9)


@pytest.mark.parametrize("phi", ["linear", "threshold"])
def test_lower_bound_is_rigorous_under_constraint_generation(phi):
    """Every iterate's bound (few rows per iteration, also cut short by max_iter) is <= R*."""
    X, y = _lam_zero_data(300, 3, seed=1)
    clf = MRCCCG(phi=phi, n_components=30, n_max=3, **EXACT).fit(X, y)
    R_star = _assert_certified(clf, X, y, atol=1e-9)
    assert clf.n_iter_ > 5 and clf.upper_ - clf.lower_ <= 1e-8
    assert np.all(np.array(clf.lower_history_) <= R_star + 1e-9)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        short = MRCCCG(phi=phi, n_components=30, n_max=3, max_iter=8, **EXACT).fit(X, y)
    _assert_certified(short, X, y, atol=1e-9)
    # the certificate's dual point, re-optimized at the end, proves at least the iterates'
    assert short.lower_ >= max(short.lower_history_) > 0.0


@pytest.mark.parametrize("K", [2, 3, 4])
def test_dual_lower_bound_holds_for_any_row_weights(K):
    """R* >= dual_lower_bound(alpha) for arbitrary weights on rows of the full LP (mixing in
    the empirical distribution repairs every violated dual constraint); tight at the
    reference LP's own dual solution, 0 when a lambda = 0 coordinate is violated."""
    X, y = _lam_zero_data(30, K, seed=K)
    ref = _reference_lp(np.c_[np.ones(len(X)), X], y, K, 0.3)
    assert np.any(ref.lam == 0.0)
    U, masks = ref.Psi[ref.row_sample], ref.row_mask
    tight, _ = dual_lower_bound(U, masks, ref.alpha, ref.tau, ref.lam, zero_tol=1e-12)
    assert tight == pytest.approx(ref.R, abs=1e-8)
    # rows with no weight on a lambda = 0 coordinate: perturbing along them keeps those exact
    d = U.shape[1]
    coef = (masks / masks.sum(axis=1, keepdims=True))[:, np.arange(K * d) // d] * \
        U[:, np.arange(K * d) % d]
    safe = np.all(coef[:, ref.lam == 0.0] == 0.0, axis=1)
    # weight moved onto rows of the full label set raises the (unrepaired) dual value
    up = safe & (masks.sum(axis=1) == K)
    rng = np.random.default_rng(K)
    positive = above = 0
    for _ in range(200):
        alpha = np.where(rng.random(len(U)) < 0.05, rng.exponential(size=len(U)), 0.0)
        # mostly near the optimum: a perturbed optimal dual, feasible or not
        if rng.random() < 0.7:
            alpha = ref.alpha + rng.uniform(0, 1e-1 * rng.random()) * alpha * up
        bound, excess = dual_lower_bound(U, masks, alpha, ref.tau, ref.lam, zero_tol=1e-12)
        assert 0.0 <= bound <= ref.R + 1e-12
        if np.any(excess[ref.lam == 0.0] > 1e-12):
            assert bound == 0.0
        positive += bound > 0.0
        above += alpha @ (1.0 - 1.0 / masks.sum(axis=1)) / alpha.sum() > ref.R + 1e-9
    assert positive > 50 and above > 20  # the repair mattered
    assert dual_lower_bound(U, masks, np.zeros(len(U)), ref.tau, ref.lam)[0] == 0.0


# ------------------------------------------------------------- awkward but valid data
def _awkward(kind, K, seed):
    rng = np.random.default_rng(seed)
    X, y = _data(40, K, d=3, seed=seed)
    if kind == "duplicated rows":
        X, y = np.vstack([X, X[:20]]), np.r_[y, y[:20]]
    elif kind == "conflicting labels":  # the same x with another label
        X, y = np.vstack([X, X[:20]]), np.r_[y, (y[:20] + 1) % K]
    elif kind == "integer features":
        X = np.round(X).clip(-2, 2)
        X = np.vstack([X, rng.integers(-1, 2, size=(20, 3))])
        y = np.r_[y, rng.integers(0, K, 20)]
    return X, y


@pytest.mark.parametrize("kind", ["duplicated rows", "conflicting labels", "integer features"])
@pytest.mark.parametrize("K", [2, 3, 4])
@pytest.mark.parametrize("phi", ["linear", "threshold", "fourier"])
def test_awkward_data_matches_the_reference_lp(kind, K, phi):
    X, y = _awkward(kind, K, seed=K)
    clf = MRCCCG(phi=phi, n_components=12, n_max=10, **EXACT).fit(X, y)
    R_star = _assert_certified(clf, X, y, atol=1e-9)
    assert clf.converged_
    assert abs(clf.upper_ - R_star) < 1e-7 and clf.upper_ - clf.lower_ <= 1e-8


@pytest.mark.parametrize("phi", ["linear", "threshold", "relu"])
@pytest.mark.parametrize("value", [1.0, 0.0, 1e10])
def test_all_rows_identical_gives_the_majority_model(phi, value):
    """One unique point: the MRC is a constant rule; with an intercept it is the majority
    class, and R* has the closed form 1 - p_max + s sqrt(p_max (1 - p_max) / n) (K = 2)."""
    X = np.full((10, 2), value)
    y = np.array([0] * 3 + [1] * 7)
    clf = MRCCCG(phi=phi, **EXACT).fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), np.ones(10))
    R_closed = 1.0 - 0.7 + clf.s * np.sqrt(0.7 * 0.3 / 10)
    assert clf.lower_ == pytest.approx(R_closed, abs=1e-9)
    assert clf.upper_ == pytest.approx(R_closed, abs=1e-9)
    X3 = np.full((10, 3), value)
    y3 = np.array([0] * 3 + [1] * 4 + [2] * 3)
    clf3 = MRCCCG(phi=phi, **EXACT).fit(X3, y3)
    np.testing.assert_array_equal(clf3.predict(X3), np.ones(10))
    _assert_certified(clf3, X3, y3, atol=1e-9)


def test_no_information_without_intercept_is_the_uniform_rule():
    """psi = 0 on every sample (zero inputs, no intercept): the MRC is uniform, R* = 1 - 1/K."""
    X, y = np.zeros((9, 2)), np.arange(9) % 3
    clf = MRCCCG(fit_intercept=False, **EXACT).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), 1.0 / 3)
    assert clf.lower_ == pytest.approx(2.0 / 3, abs=1e-12)
    assert clf.upper_ == pytest.approx(2.0 / 3, abs=1e-12)


def _generated(rng):
    """Awkward data of a random kind: duplicates, conflicting labels, integer grids, constant
    features, huge offsets, tiny scales; K = 2..4 classes, every class present."""
    K = int(rng.integers(2, 5))
    n = int(rng.integers(K + 1, 36))
    d = int(rng.integers(1, 4))
    y = np.r_[np.arange(K), rng.integers(0, K, n - K)]
    X = rng.normal(size=(n, d)) + 0.8 * y[:, None]
    if rng.random() < 0.4:
        X = np.round(X * rng.choice([1.0, 2.0])).astype(np.float64)  # integer grid
    if rng.random() < 0.4:  # duplicated rows, with the same or a conflicting label
        k = int(rng.integers(1, n + 1))
        idx = rng.integers(0, n, k)
        flip = rng.random(k) < 0.5
        X = np.vstack([X, X[idx]])
        y = np.r_[y, np.where(flip, (y[idx] + 1) % K, y[idx])]
    if rng.random() < 0.3:
        X[:, int(rng.integers(0, d))] = rng.choice([0.0, 3.0, -1e10])  # constant feature
    units = rng.choice(["plain", "offset", "tiny", "timestamps"])
    if units == "offset":
        X = X + 1e10
    elif units == "tiny":
        X = X * 1e-200
    elif units == "timestamps":
        X = 1.7e9 + 60.0 * X
    return X, y


@pytest.mark.parametrize("seed", range(40))
def test_generated_awkward_inputs_are_certified(seed):
    """A clear error or a model whose bounds hold against the reference LP."""
    rng = np.random.default_rng(seed)
    X, y = _generated(rng)
    phi = str(rng.choice(["linear", "threshold"]))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            clf = MRCCCG(phi=phi, n_max=int(rng.integers(2, 50)), **EXACT).fit(X, y)
    except ValueError as exc:
        assert "feature map produced no features" in str(exc)
        return
    _assert_certified(clf, X, y, atol=1e-8)
    assert clf.converged_ and clf.upper_ - clf.lower_ <= 1e-8


def test_rules():
    X, y = _data(100, 2, seed=7)
    clf = MRCCCG().fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all(proba >= 0)
    dec = clf.decision_function(X)
    assert dec.shape == (100,)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[(dec > 0).astype(int)])
    assert (clf.predict(X) == y).mean() > 0.8
    X3, y3 = _data(100, 3, seed=7)
    clf3 = MRCCCG().fit(X3, y3 + 10)
    np.testing.assert_array_equal(clf3.classes_, [10, 11, 12])
    assert clf3.decision_function(X3).shape == (100, 3)
    np.testing.assert_array_equal(
        clf3.predict(X3), clf3.classes_[clf3.decision_function(X3).argmax(axis=1)]
    )


def test_predict_proba_is_the_mrc_rule():
    """h(y|x) = (Phi(x, y)^T mu - nu + 1)_+ / c_x, uniform where c_x = 0; c_x <= 1 on the
    training inputs (that is what makes upper_ a bound)."""
    X, y = _data(120, 4, seed=11)
    clf = MRCCCG(**EXACT).fit(X, y)
    V = clf._psi(X) @ clf.mu_.reshape(4, -1).T
    H = np.maximum(V - clf.nu_ + 1.0, 0.0)
    c = H.sum(axis=1)
    assert np.all(c <= 1.0 + 1e-9)
    assert np.all(c > 0)
    np.testing.assert_allclose(clf.predict_proba(X), H / c[:, None], atol=1e-12)
    # far from the data every term vanishes on one side: the rule there is still a distribution
    far = np.vstack([X[:3] * 1e3, -X[:3] * 1e3])
    P = clf.predict_proba(far)
    Hf = np.maximum(clf._psi(far) @ clf.mu_.reshape(4, -1).T - clf.nu_ + 1.0, 0.0)
    zero = Hf.sum(axis=1) == 0
    np.testing.assert_allclose(P[zero], 0.25)
    np.testing.assert_allclose(P[~zero], Hf[~zero] / Hf[~zero].sum(axis=1, keepdims=True))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


# ---------------------------------------------------------------------------- solvers
class _RecordingHighsLP(HighsLP):
    """HighsLP that logs its additions and solves (to check persistence and warm starts)."""

    instances: list = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.log, self.solves = [], []
        _RecordingHighsLP.instances.append(self)

    def add_cols(self, *args):
        self.log.append(("add_cols", args))
        super().add_cols(*args)

    def add_rows(self, *args):
        self.log.append(("add_rows", args))
        super().add_rows(*args)

    def delete_rows(self, rows):
        self.log.append(("delete_rows", (np.array(rows),)))
        super().delete_rows(rows)

    def solve(self, method=None, time_limit=None):
        res = super().solve(method, time_limit)
        self.solves.append((self.n_rows, self.n_cols, res.iterations))
        return res


def test_one_persistent_lp_is_updated_and_solved_warm(monkeypatch):
    import exactclf.mrc._ccg as ccg

    _RecordingHighsLP.instances = []
    monkeypatch.setattr(ccg, "make_lp", lambda solver, **kw: _RecordingHighsLP(**kw))
    X, y = _data(400, 3, seed=12)
    clf = MRCCCG(phi="fourier", n_components=30, m_max=20, n_max=20, **EXACT).fit(X, y)
    assert len(_RecordingHighsLP.instances) == 1  # never rebuilt
    lp = _RecordingHighsLP.instances[0]
    assert len(lp.solves) == clf.n_iter_ > 3
    rows, cols = np.array(lp.solves)[:, 0], np.array(lp.solves)[:, 1]
    # columns (nu and mu1, mu2 per active feature) only grow; rows (generated constraints)
    # are added, and deleted once their slack has stayed basic
    assert np.all(np.diff(cols) >= 0) and cols[-1] == 1 + 2 * clf.n_active_features_
    assert cols[-1] > cols[0]  # column generation added features
    kinds = [kind for kind, _ in lp.log]
    assert "delete_rows" in kinds and rows[-1] < clf.n_constraints_
    # the last re-solve, warm, needs far fewer simplex iterations than the same LP cold
    cold = HighsLP(tol=1e-9)
    for kind, args in lp.log:
        getattr(cold, kind)(*args)
    res = cold.solve()
    assert res.objective == pytest.approx(clf.lower_, abs=1e-9)
    assert lp.solves[-1][2] < res.iterations / 2


def _lp_with_inactive_row(lp):
    lp.add_cols(np.array([-1.0, -1.0]), np.zeros(2), np.full(2, np.inf))
    # x1 + 2 x2 <= 4, 3 x1 + x2 <= 6 (binding at the optimum), x1 + x2 <= 100 (inactive)
    lp.add_rows(np.full(3, -np.inf), np.array([4.0, 6.0, 100.0]), np.array([0, 2, 4]),
                np.array([0, 1, 0, 1, 0, 1]), np.array([1.0, 2.0, 3.0, 1.0, 1.0, 1.0]))


@pytest.mark.parametrize("solver", ["highs", "gurobi"])
def test_deleting_a_basic_row_keeps_the_basis(solver):
    lp = make_lp(solver, tol=1e-9)
    assert lp.name == solver  # a tiny model: no licence fallback
    _lp_with_inactive_row(lp)
    first = lp.solve("dual")
    assert first.row_basic.tolist() == [False, False, True]
    lp.delete_rows(np.array([2]))
    assert lp.n_rows == 2
    second = lp.solve("dual")
    assert second.objective == pytest.approx(-2.8) and second.iterations == 0
    assert second.row_dual.shape == (2,)
    # later rows are appended after the remaining ones
    lp.add_rows(np.array([-np.inf]), np.array([1.5]), np.array([0]), np.array([0]),
                np.array([1.0]))
    third = lp.solve("dual")
    assert third.objective == pytest.approx(-2.75) and third.row_dual[2] < 0


@pytest.mark.parametrize("solver", ["highs", "gurobi"])
def test_changing_column_bounds_resolves_warm(solver):
    """The box step's bound changes: re-solved from the previous basis, and undone."""
    lp = make_lp(solver, tol=1e-9)
    _lp_with_inactive_row(lp)
    assert lp.solve("dual").objective == pytest.approx(-2.8)  # x = (1.6, 1.2)
    lp.set_col_bounds(np.array([0]), np.zeros(1), np.array([1.0]))
    boxed = lp.solve("dual")
    assert boxed.objective == pytest.approx(-2.5) and boxed.iterations <= 2
    np.testing.assert_allclose(boxed.x, [1.0, 1.5], atol=1e-9)
    lp.set_col_bounds(np.array([0]), np.zeros(1), np.array([np.inf]))
    assert lp.solve("dual").objective == pytest.approx(-2.8)


def test_highs_lp_is_persistent_and_warm():
    lp = HighsLP(tol=1e-9)
    lp.add_cols(np.array([-1.0, -1.0]), np.zeros(2), np.full(2, np.inf))
    lp.add_rows(np.full(2, -np.inf), np.array([4.0, 6.0]), np.array([0, 2]),
                np.array([0, 1, 0, 1]), np.array([1.0, 2.0, 3.0, 1.0]))
    first = lp.solve()
    lp.add_rows(np.array([-np.inf]), np.array([1.5]), np.array([0]), np.array([0]),
                np.array([1.0]))
    second = lp.solve("dual")
    assert first.objective == pytest.approx(-2.8) and second.objective == pytest.approx(-2.75)
    assert second.iterations <= 2  # re-solved from the previous basis
    assert np.all(second.row_dual <= 1e-12)


def _gurobi_is_size_limited() -> bool:
    """Whether the installed Gurobi licence refuses a model of 2001 variables (the pip
    licence does, with error 10010); gurobipy is a test dependency: no skip."""
    import gurobipy as gp

    with gp.Env(empty=True) as env:
        env.setParam("OutputFlag", 0)
        env.start()
        with gp.Model(env=env) as model:
            model.addVars(2001)
            try:
                model.optimize()
            except gp.GurobiError as exc:
                assert exc.errno == 10010, exc
                return True
    return False


@pytest.mark.parametrize("K, params", [(2, {}), (3, {}), (5, {}),
                                       (3, dict(phi="fourier", n_components=20, m_max=8))])
def test_gurobi_matches_highs(K, params):
    """Same R* with both solvers (tiny models: Gurobi's pip licence is size-limited). Any
    Gurobi error fails the test; so does a fallback to HiGHS."""
    X, y = _data(60, K, seed=8)
    a = MRCCCG(lp_solver="highs", **params, **EXACT).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SolverFallbackWarning)
        b = MRCCCG(lp_solver="gurobi", **params, **EXACT).fit(X, y)
    assert b.lp_solver_ == "gurobi"
    assert abs(a.upper_ - b.upper_) < 1e-6
    assert abs(a.lower_ - b.lower_) < 1e-6
    R_star = _full_lp_R(b, X, y)
    assert b.lower_ <= R_star + 1e-8 <= b.upper_ + 2e-8


def test_gurobi_licence_refusal_falls_back_to_highs():
    """With the size-limited licence, 2500 rows in one iteration are refused and the fit
    continues on HiGHS with a warning; with an unrestricted one Gurobi solves it all."""
    X, y = _data(3000, 3, seed=9)
    est = MRCCCG(lp_solver="gurobi", n_max=2500, eps1=1e-6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = est.fit(X, y)
    fell_back = any(issubclass(w.category, SolverFallbackWarning) for w in caught)
    if _gurobi_is_size_limited():
        assert fell_back and clf.lp_solver_ == "highs"
    else:
        assert not fell_back and clf.lp_solver_ == "gurobi"
    ref = MRCCCG(lp_solver="highs", n_max=2500, eps1=1e-6).fit(X, y)
    assert abs(clf.upper_ - ref.upper_) < 1e-6


def test_gurobi_refusal_mid_fit_replays_the_lp_on_highs(monkeypatch):
    """A licence refusal at the third solve: HiGHS gets the same rows and columns (added,
    deleted) and the fit ends where a HiGHS fit ends."""
    real_solve = GurobiLP.solve
    calls = []

    def refusing_solve(self, method=None, time_limit=None):
        calls.append(method)
        if len(calls) == 3:
            raise GurobiLicenceError("Model too large for size-limited license")
        return real_solve(self, method, time_limit)

    monkeypatch.setattr(GurobiLP, "solve", refusing_solve)
    X, y = _data(300, 3, seed=10)
    with pytest.warns(SolverFallbackWarning, match="HiGHS"):
        clf = MRCCCG(lp_solver="gurobi", n_max=10, **EXACT).fit(X, y)
    assert len(calls) == 3 and clf.lp_solver_ == "highs" and clf.n_iter_ > 3
    _assert_certified(clf, X, y, atol=1e-9)
    assert clf.upper_ - clf.lower_ <= 1e-8


def test_gurobi_missing_names_the_extra(monkeypatch):
    hide_module(monkeypatch, "gurobipy")
    with pytest.raises(ImportError, match=r"pip install exactclf\[gurobi\]"):
        make_lp("gurobi")
    X, y = _data(30, 2)
    with pytest.raises(ImportError, match=r"pip install exactclf\[gurobi\]"):
        MRCCCG(lp_solver="gurobi").fit(X, y)


# ------------------------------------------------------------------------ feature maps
def test_feature_maps():
    X, y = _data(200, 2, d=3)
    f1 = fit_feature_map("fourier", X, y, n_components=2000, gamma=0.5, random_state=0)
    F = f1.transform(X[:5])
    K_approx = 2.0 * F @ F.T / 2000
    K_true = np.exp(-0.5 * ((X[:5, None] - X[None, :5]) ** 2).sum(-1))
    assert np.abs(K_approx - K_true).max() < 0.1
    f2 = fit_feature_map("fourier", X, y, n_components=7, gamma="scale", random_state=0)
    np.testing.assert_array_equal(f2.transform(X), fit_feature_map(
        "fourier", X, y, n_components=7, gamma="scale", random_state=0).transform(X))
    r = fit_feature_map("relu", X, y, n_components=9, gamma="auto", random_state=0)
    assert r.transform(X).shape == (200, 9) and r.transform(X).min() == 0.0
    t = fit_feature_map("threshold", X, y, n_components=6, gamma="scale")
    T = t.transform(X)
    assert T.shape == (200, 6) and set(np.unique(T)) <= {0.0, 1.0}
    x1 = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    t1 = fit_feature_map("threshold", x1, np.array([0, 0, 1, 1, 0]), n_components=10,
                         gamma="scale")
    np.testing.assert_allclose(t1.params["threshold"], [1.5, 3.5])


def test_random_state_makes_fits_reproducible():
    X, y = _data(80, 2)
    a = MRCCCG(phi="relu", n_components=10, random_state=3).fit(X, y)
    b = MRCCCG(phi="relu", n_components=10, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.mu_, b.mu_)


# -------------------------------------------------------------------------- bad input
def test_bad_input():
    X, y = _data(30, 2)
    with pytest.raises(ValueError, match="at least 2 classes"):
        MRCCCG().fit(X, np.zeros(30))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MRCCCG().fit(Xn, y)
    with pytest.raises(ValueError, match="Unknown label type"):
        MRCCCG().fit(X, np.linspace(0, 1, 30))
    with pytest.raises(InvalidParameterError, match="phi"):
        MRCCCG(phi="rbf").fit(X, y)
    with pytest.raises(InvalidParameterError, match="phi"):
        MRCCCG(phi=object()).fit(X, y)
    with pytest.raises(InvalidParameterError, match="eps1"):
        MRCCCG(eps1=-1.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="lp_solver"):
        MRCCCG(lp_solver="cplex").fit(X, y)
    clf = MRCCCG().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :2])
    with pytest.raises(ValueError, match="no features"):
        MRCCCG(phi="threshold", fit_intercept=False).fit(np.zeros((4, 1)), [0, 1, 0, 1])


def test_failed_refit_leaves_an_unfitted_estimator():
    X, y = _data(40, 3)
    clf = MRCCCG().fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        clf.fit(X, np.zeros(40))
    assert not [name for name in vars(clf) if name.endswith("_")]
    with pytest.raises(NotFittedError):
        clf.predict(X)
    clf.fit(X, y)
    with pytest.raises(ValueError, match="no features"):  # raised after the feature map
        clf.set_params(phi="threshold", fit_intercept=False).fit(np.zeros((4, 1)), [0, 1, 0, 1])
    assert not [name for name in vars(clf) if name.endswith("_")]
    with pytest.raises(NotFittedError):
        clf.predict(X)


def test_features_constant_on_a_class_with_small_values_reach_the_optimum():
    """A feature 0 on one class and small on some samples of the others has lambda = 0 and
    its optimum far out (pushing a label out of a sample takes |mu_j| of 1 / psi_j), with a
    reduced cost below tol per unit of mu: the box binds by what its next radius gains, or
    the generation would stop with the box holding upper_ 0.6 % above R*."""
    rng = np.random.default_rng(1)
    y = np.arange(240) % 8
    X = np.abs(rng.standard_normal((240, 6))) + 0.3 * y[:, None] * (np.arange(6) % 3 == 0)
    X[:, -1] = 0.0
    for k in range(8):
        X[y == k, k % 5] = 0.0
    Psi, _, tau, lam = _definition(np.c_[np.ones(240), X], y, 8, 0.3)
    res = mrc_ccg(Psi, y, 8, tau, lam, whole_samples=False)
    assert res.converged and res.upper - res.lower <= 1e-3 * res.upper


def test_loose_lower_bound_at_convergence_warns(monkeypatch):
    """If the certificate's dual point proves less than R(mu) within MRC_RTOL at the end
    (solver tolerance), say so, with a stop reason and the cause (not eps1, which is far
    smaller here)."""
    import exactclf.mrc._estimator as estimator

    real = estimator.dual_point

    def halved(*args, **kwargs):
        point = real(*args, **kwargs)
        return point._replace(bound=0.5 * point.bound)

    real_ccg = estimator.mrc_ccg

    def no_bound(*args, **kwargs):  # nor does the generation's own bound stand in
        return dataclasses.replace(real_ccg(*args, **kwargs), lower=0.0)

    monkeypatch.setattr(estimator, "dual_point", halved)
    monkeypatch.setattr(estimator, "mrc_ccg", no_bound)
    X, y = _data(60, 2)
    with pytest.warns(ConvergenceWarning, match="more than MRC_RTOL") as record:
        clf = MRCCCG(**EXACT).fit(X, y)
    assert clf.converged_ and clf.lower_ < clf.upper_ / 2 + 1e-9
    assert not clf.certificate_.is_optimal and clf.stop_reason_ == StopReason.OPEN_GAP
    assert "decrease tol" in str(record[0].message)
    assert "eps1" not in str(record[0].message)


def test_gpu_request_is_served_or_explained():
    """With a GPU: the CuPy path gives the CPU's optimum; without one: a clear error."""
    from exactclf._backend import gpu_available

    X, y = _data(30, 2)
    if not gpu_available():
        with pytest.raises(RuntimeError, match="exactclf\\[gpu\\]"):
            MRCCCG(device="gpu").fit(X, y)
        return
    gpu = MRCCCG(device="gpu", **EXACT).fit(X, y)
    cpu = MRCCCG(device="cpu", **EXACT).fit(X, y)
    assert gpu.device_ == "gpu" and abs(gpu.upper_ - cpu.upper_) < 1e-9
