"""MRCCCG beyond the plain fit: sample weights, sparse input, time limit and Ctrl-C, the bounds
of the fitted rule over the uncertainty set, selected features and the compact binary
features. References are written out here from the definitions (every sample, every label
subset) and solved by SciPy's HiGHS."""

import itertools
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.exceptions import ConvergenceWarning
from test_mrc import EXACT, _data, _exact_R, _full_lp_R, _psi, _reference_lp

from exactclf.mrc import MRCCCG, _estimator, mrc_statistics
from exactclf.mrc._bounds import most_violated_bruteforce
from exactclf.mrc._lp import HighsLP


def _reference_embedded(Psi, y, B, s):
    """R* of the 0-1 MRC LP for ``Phi(x, c) = B[c] (x) psi(x)``, from the definition: ``tau``,
    ``lambda`` over all samples, a row per sample and nonempty label subset C,
    ``sum_{c in C} Phi(x_i, c) / |C|``. Columns are scaled by their largest magnitude (R* does
    not change)."""
    Psi = np.asarray(Psi, dtype=np.float64)
    top = np.abs(Psi).max(axis=0)
    Psi = Psi / np.where(top > 0, top, 1.0)
    n, d = Psi.shape
    K, q = B.shape
    m = q * d
    Phi = np.stack([np.kron(B[c], Psi) for c in range(K)], axis=1)  # n x K x m
    Phi_true = Phi[np.arange(n), y]
    tau, lam = Phi_true.mean(axis=0), s * Phi_true.std(axis=0) / np.sqrt(n)
    A, b = [], []
    for size in range(1, K + 1):
        for C in itertools.combinations(range(K), size):
            F = Phi[:, list(C)].sum(axis=1) / size
            A.append(np.hstack([F, -F, -np.ones((n, 1))]))
            b.append(np.full(n, 1.0 / size - 1.0))
    res = linprog(np.r_[-(tau - lam), tau + lam, 1.0], A_ub=np.vstack(A), b_ub=np.concatenate(b),
                  bounds=[(0, None)] * (2 * m) + [(None, None)], method="highs",
                  options=dict(primal_feasibility_tolerance=1e-10,
                               dual_feasibility_tolerance=1e-10))
    assert res.status == 0, res.message
    return res.fun


# ------------------------------------------------------------------------ sample_weight
@pytest.mark.parametrize("seed", range(6))
def test_integer_weights_give_the_r_star_of_duplicated_rows(seed):
    rng = np.random.default_rng(seed)
    K = 2 + seed % 3
    X, y = _data(40, K, d=3, seed=seed)
    w = rng.integers(0, 4, len(X))
    for c in range(K):  # every class keeps a positive weight
        first = np.flatnonzero(y == c)[0]
        w[first] = max(w[first], 1)
    phi = ["linear", "threshold"][seed % 2]
    clf = MRCCCG(phi=phi, n_components=12, n_max=7, **EXACT).fit(X, y, sample_weight=w)
    Xd, yd = np.repeat(X, w, axis=0), np.repeat(y, w)
    R_star = _full_lp_R(clf, Xd, yd)  # the reference LP on the duplicated rows
    assert clf.converged_ and abs(clf.upper_ - R_star) < 1e-7
    assert clf.lower_ <= R_star + 1e-9 and clf.upper_ - clf.lower_ <= 1e-8
    # upper_ is R(mu_) of the duplicated data, evaluated from the definition
    assert clf.upper_ == pytest.approx(_exact_R(clf, Xd, yd)[0], abs=1e-9)
    dup = MRCCCG(phi=phi, n_components=12, n_max=7, **EXACT).fit(Xd, yd)
    assert abs(dup.upper_ - clf.upper_) < 1e-7
    np.testing.assert_allclose(clf.tau_, dup.tau_, atol=1e-12)
    np.testing.assert_allclose(clf.lambda_, dup.lambda_, atol=1e-12)
    proba = clf.predict_proba(Xd)
    assert 1 - proba[np.arange(len(yd)), yd].mean() <= clf.upper_ + 1e-9


def test_zero_weight_is_a_missing_row():
    X, y = _data(60, 3, seed=4)
    w = np.ones(len(X))
    w[::4] = 0.0
    w[y == 2] = 0.0  # class 2 has no weight left: it is absent
    a = MRCCCG(**EXACT).fit(X, y, sample_weight=w)
    b = MRCCCG(**EXACT).fit(X[w > 0], y[w > 0])
    np.testing.assert_array_equal(a.classes_, [0, 1])
    np.testing.assert_array_equal(a.mu_, b.mu_)
    assert a.upper_ == b.upper_ and a.lower_ == b.lower_


def test_weighted_statistics_match_the_definition():
    rng = np.random.default_rng(1)
    X, y = _data(50, 3, seed=1)
    w = rng.uniform(0.1, 3.0, len(X))
    Psi = np.c_[np.ones(len(X)), X]
    tau, lam = mrc_statistics(Psi, y, 3, 0.4, sample_weight=w)
    Phi = np.zeros((len(X), 3 * Psi.shape[1]))
    for i, (p, c) in enumerate(zip(Psi, y, strict=True)):
        Phi[i, c * Psi.shape[1]:(c + 1) * Psi.shape[1]] = p
    mean = w @ Phi / w.sum()
    std = np.sqrt(w @ (Phi - mean) ** 2 / w.sum())
    np.testing.assert_allclose(tau, mean, atol=1e-14)
    np.testing.assert_allclose(lam, 0.4 * std / np.sqrt(w.sum()), atol=1e-14)
    # fractional weights: the fit is certified against its own weighted statistics
    clf = MRCCCG(**EXACT).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(clf.tau_, mean, atol=1e-12)
    assert clf.converged_ and clf.upper_ - clf.lower_ <= 1e-8


def test_bad_sample_weight():
    X, y = _data(30, 2)
    with pytest.raises(ValueError, match="(?i)negative"):
        MRCCCG().fit(X, y, sample_weight=-np.ones(30))
    with pytest.raises(ValueError, match="non-zero"):
        MRCCCG().fit(X, y, sample_weight=np.zeros(30))
    with pytest.raises(ValueError, match="shape"):
        MRCCCG().fit(X, y, sample_weight=np.ones(29))
    with pytest.raises(ValueError, match="at least 2 classes"):
        MRCCCG().fit(X, y, sample_weight=(y == 0).astype(float))


# ------------------------------------------------------------------------------- sparse
def _sparse_data(n, K, seed):
    rng = np.random.default_rng(seed)
    y = np.r_[np.arange(K), rng.integers(0, K, n - K)]
    X = (rng.random((n, 12)) < 0.15 + 0.1 * (y[:, None] == np.arange(12) % K)).astype(float)
    X[:, 3] *= rng.integers(1, 4, n)  # not only 0/1
    return X, y


@pytest.mark.parametrize("K", [2, 3, 4])
@pytest.mark.parametrize("phi", ["linear", "threshold", "fourier"])
def test_sparse_input_gives_the_dense_model(K, phi, monkeypatch):
    import exactclf.mrc._rows as rows

    X, y = _sparse_data(150, K, seed=K)
    kinds = []
    real_rows = rows.lp_rows
    monkeypatch.setattr(rows, "lp_rows",
                        lambda U, *a: kinds.append(sp.issparse(U)) or real_rows(U, *a))
    params = dict(phi=phi, n_components=10, n_max=10, **EXACT)
    sparse = MRCCCG(**params).fit(sp.csr_matrix(X), y)
    if phi == "linear":  # the generated rows (all calls after the class averages) stay sparse
        assert len(kinds) > 2 and all(kinds[1:])
    dense = MRCCCG(**params).fit(X, y)
    assert abs(sparse.upper_ - dense.upper_) < 1e-9
    assert abs(sparse.upper_ - _full_lp_R(dense, X, y)) < 1e-7
    np.testing.assert_allclose(sparse.predict_proba(sp.csr_matrix(X)), dense.predict_proba(X),
                               atol=1e-7)
    np.testing.assert_array_equal(sparse.predict(sp.csc_matrix(X)), dense.predict(X))


def test_sparse_transformer_output_stays_sparse():
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(120, 3)).astype(float)
    y = (X[:, 0] + rng.integers(0, 2, 120) > 2).astype(int)
    clf = MRCCCG(phi=OneHotEncoder(), **EXACT).fit(X, y)
    assert sp.issparse(clf._psi(X))
    R_star = _reference_lp(clf._psi(X).toarray(), y, 2, clf.s).R
    assert abs(clf.upper_ - R_star) < 1e-7


# ---------------------------------------------------------------- time limit and Ctrl-C
@pytest.mark.parametrize("interrupt", [False, True])
def test_pricing_after_an_interrupt_takes_only_its_minimum_time(interrupt, monkeypatch):
    """The final dual point gets a share of the fit's time, but after Ctrl-C only the
    minimum (0 here), and the bound it leaves stays valid."""
    real_solve = HighsLP.solve
    calls, pricing = [], []

    def solve(self, method=None, time_limit=None):
        calls.append(method)
        if interrupt and len(calls) == 3:
            raise KeyboardInterrupt
        return real_solve(self, method, time_limit)

    final_dual_point = MRCCCG._final_dual_point

    def timed(self, t0, deadline=None, **kwargs):
        pricing.append(deadline - time.perf_counter())
        return final_dual_point(self, t0, deadline=deadline, **kwargs)

    monkeypatch.setattr(HighsLP, "solve", solve)
    monkeypatch.setattr(MRCCCG, "_final_dual_point", timed)
    monkeypatch.setattr(_estimator, "_DUAL_MIN_SECONDS", 0.0)
    X, y = _data(300, 3, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MRCCCG(n_max=5, **EXACT).fit(X, y)
    assert (clf.stop_reason_ == "interrupted") == interrupt
    assert len(pricing) == 1 and (pricing[0] <= 0.0) == interrupt
    assert clf.lower_ <= _full_lp_R(clf, X, y) + 1e-9


@pytest.mark.parametrize("k", [1, 2, 4, 7])
def test_interrupt_keeps_the_best_certified_model(k, monkeypatch):
    real_solve = HighsLP.solve
    calls = []

    def solve(self, method=None, time_limit=None):
        calls.append(method)
        if len(calls) == k:
            raise KeyboardInterrupt
        return real_solve(self, method, time_limit)

    monkeypatch.setattr(HighsLP, "solve", solve)
    X, y = _data(300, 3, seed=3)
    with pytest.warns(ConvergenceWarning, match="interrupt"):
        clf = MRCCCG(n_max=5, **EXACT).fit(X, y)
    assert clf.stop_reason_ == "interrupted" and not clf.converged_
    assert clf.n_iter_ == k - 1 == len(clf.R_history_)
    R, nu = _exact_R(clf, X, y)
    assert clf.upper_ == pytest.approx(R, abs=1e-10)
    R_star = _full_lp_R(clf, X, y)
    assert clf.lower_ <= R_star + 1e-9 <= clf.upper_ + 2e-9
    # the certificate's dual point, re-optimized at the end, proves at least the iterates'
    assert clf.lower_ >= max(clf.lower_history_, default=0.0)
    if k == 1:  # no LP solution yet: the uniform rule, R = 1 - 1/K
        assert clf.upper_ == pytest.approx(2.0 / 3.0)
        np.testing.assert_allclose(clf.predict_proba(X), 1.0 / 3.0)
    else:
        assert clf.upper_ == clf.upper_history_[-1] <= min(clf.R_history_)
    proba = clf.predict_proba(X)
    assert 1 - proba[np.arange(len(y)), y].mean() <= clf.upper_ + 1e-9


def test_time_limit_keeps_the_best_certified_model(monkeypatch):
    X, y = _data(400, 3, seed=2)
    with pytest.warns(ConvergenceWarning, match="time_limit"):
        clf = MRCCCG(time_limit=1e-9, **EXACT).fit(X, y)
    assert clf.stop_reason_ == "time_limit" and clf.n_iter_ == 0
    assert clf.upper_ == pytest.approx(_exact_R(clf, X, y)[0], abs=1e-12)
    # an LP solve cut off by the limit (HiGHS reports it) ends the generation the same way
    real_solve = HighsLP.solve
    calls = []

    def solve(self, method=None, time_limit=None):
        res = real_solve(self, method, time_limit)
        calls.append(time_limit)
        if len(calls) == 3:
            res.optimal, res.time_limit_reached, res.status = False, True, "Time limit reached"
        return res

    monkeypatch.setattr(HighsLP, "solve", solve)
    with pytest.warns(ConvergenceWarning, match="time_limit"):
        clf = MRCCCG(time_limit=1e6, n_max=5, **EXACT).fit(X, y)
    assert all(t is not None and 0 < t <= 1e6 for t in calls)  # the LP gets what is left
    assert clf.stop_reason_ == "time_limit" and clf.n_iter_ == 2
    R_star = _full_lp_R(clf, X, y)
    assert clf.upper_ == pytest.approx(_exact_R(clf, X, y)[0], abs=1e-10)
    assert clf.lower_ <= R_star + 1e-9 <= clf.upper_ + 2e-9


def test_highs_time_limit_is_per_solve():
    """HiGHS' own limit counts the run time of every solve of the object; the adapter's
    limit is per solve."""
    rng = np.random.default_rng(0)
    lp = HighsLP()
    lp.add_cols(-rng.random(40), np.zeros(40), np.full(40, np.inf))
    for _ in range(5):
        A = sp.csr_matrix(rng.random((100, 40)))
        lp.add_rows(np.full(100, -np.inf), np.ones(100), A.indptr[:-1], A.indices, A.data)
        before = lp._h.getRunTime()
        res = lp.solve("dual", time_limit=3600.0)
        assert res.optimal and not res.time_limit_reached
        # the limit handed to HiGHS is on its cumulative clock: what ran before, plus 3600 s
        assert lp._h.getOptionValue("time_limit")[1] >= before + 3600.0
    assert before > 0.0  # so the last check tells the two clocks apart
    lp._h.setOptionValue("time_limit", 1e-9)  # a limit already passed is reported
    A = sp.csr_matrix(rng.random((100, 40)))
    lp.add_rows(np.full(100, -np.inf), np.full(100, 0.5), A.indptr[:-1], A.indices, A.data)
    lp._h.run()
    assert lp._h.getModelStatus() == lp._highspy.HighsModelStatus.kTimeLimit


# ------------------------------------------------------------- bounds of the fitted rule
def _bound_lp(clf, X, y, loss, sense):
    """min_p / max_p E_p[loss] over p supported on the training inputs x all labels with
    |E_p Phi - tau| <= lambda, written out in p (not the dual the package solves)."""
    K = len(clf.classes_)
    Psi = _psi(clf, X)
    top = np.abs(Psi).max(axis=0)
    Psi = Psi / np.where(top > 0, top, 1.0)
    n, d = Psi.shape
    Phi = np.zeros((n, K, K * d))
    for c in range(K):
        Phi[:, c, c * d:(c + 1) * d] = Psi
    y_idx = np.searchsorted(clf.classes_, y)
    Phi_true = Phi[np.arange(n), y_idx]
    tau, lam = Phi_true.mean(axis=0), clf.s * Phi_true.std(axis=0) / np.sqrt(n)
    F = Phi.reshape(n * K, K * d).T
    sign = 1.0 if sense == "min" else -1.0
    res = linprog(sign * loss.ravel(), A_ub=np.vstack([F, -F]), b_ub=np.r_[tau + lam, lam - tau],
                  A_eq=np.ones((1, n * K)), b_eq=[1.0], bounds=(0, None), method="highs")
    assert res.status == 0, res.message
    return sign * res.fun


@pytest.mark.parametrize("seed, K, phi", [(0, 2, "linear"), (1, 3, "linear"), (2, 4, "linear"),
                                          (3, 3, "threshold"), (4, 2, "fourier"),
                                          (5, 5, "linear")])
def test_lower_and_upper_bounds_sandwich_the_training_loss(seed, K, phi):
    X, y = _data(80, K, seed=seed)
    clf = MRCCCG(phi=phi, n_components=10, **EXACT).fit(X, y)
    y_idx = np.searchsorted(clf.classes_, y)
    proba = clf.predict_proba(X)
    randomized = 1 - proba[np.arange(len(y)), y_idx].mean()
    lower, upper = clf.get_lower_bound(), clf.get_upper_bound()
    assert upper == clf.upper_
    assert 0.0 <= lower <= randomized + 1e-9 <= upper + 2e-9
    if phi == "linear":  # the bound is the LP's optimum, written out in p
        assert lower == pytest.approx(_bound_lp(clf, X, y, 1 - proba, "min"), abs=1e-6)
    # the deterministic rule: its own bounds, and at most twice upper_
    wrong = np.ones_like(proba)
    wrong[np.arange(len(y)), np.argmax(clf.decision_function(X).reshape(len(y), -1), axis=1)
          if K > 2 else (clf.decision_function(X) > 0).astype(int)] = 0.0
    det_lower = clf.get_lower_bound("deterministic")
    det_upper = clf.get_upper_bound("deterministic")
    error = np.mean(clf.predict(X) != y)
    assert 0.0 <= det_lower <= error + 1e-9 <= det_upper + 2e-9 <= 2 * clf.upper_ + 3e-9
    if phi == "linear":
        assert det_lower == pytest.approx(_bound_lp(clf, X, y, wrong, "min"), abs=1e-6)
        assert det_upper <= _bound_lp(clf, X, y, wrong, "max") + 1e-6
    with pytest.raises(ValueError, match="rule"):
        clf.get_lower_bound("other")


def test_rule_bounds_with_weights_and_sparse_input():
    X, y = _sparse_data(120, 3, seed=7)
    w = np.random.default_rng(0).integers(1, 3, len(y))
    clf = MRCCCG(**EXACT).fit(sp.csr_matrix(X), y, sample_weight=w)
    proba = clf.predict_proba(X)
    loss = 1 - proba[np.arange(len(y)), y]
    assert clf.get_lower_bound() <= w @ loss / w.sum() + 1e-9 <= clf.get_upper_bound() + 2e-9
    dup = MRCCCG(**EXACT).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert clf.get_lower_bound() == pytest.approx(dup.get_lower_bound(), abs=1e-6)


# ------------------------------------------------- selected features, compact binary Phi
def test_selected_features_hold_the_support_of_mu():
    X, y = _data(80, 3, seed=1)
    clf = MRCCCG(phi="fourier", n_components=20, m_max=8, **EXACT).fit(X, y)
    sel = clf.selected_features_
    assert len(sel) == clf.n_active_features_ < len(clf.mu_)
    assert np.all(np.diff(sel) > 0) and sel.min() >= 0 and sel.max() < len(clf.mu_)
    outside = np.setdiff1d(np.arange(len(clf.mu_)), sel)
    assert np.all(clf.mu_[outside] == 0.0)
    full = MRCCCG(**EXACT).fit(X, y)
    np.testing.assert_array_equal(full.selected_features_, np.arange(len(full.mu_)))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("phi", ["linear", "threshold", "relu"])
def test_compact_binary_features_match_their_reference_lp(seed, phi):
    X, y = _data(70, 2, d=3, seed=seed)
    clf = MRCCCG(phi=phi, one_hot=False, n_components=8, **EXACT).fit(X, y + 5)
    assert clf.mu_.shape == (clf.n_phi_features_,)
    R_star = _reference_embedded(_psi(clf, X), y, np.array([[-1.0], [1.0]]), clf.s)
    assert clf.converged_ and abs(clf.upper_ - R_star) < 1e-7
    assert clf.lower_ <= R_star + 1e-9 and clf.upper_ - clf.lower_ <= 1e-8
    # scores +-psi^T mu, the rule and R(mu_) from the definition
    v = _psi(clf, X) @ clf.mu_
    np.testing.assert_allclose(clf.decision_function(X), 2 * v, atol=1e-9)
    V = np.c_[-v, v]
    H = np.maximum(V - clf.nu_ + 1.0, 0.0)
    np.testing.assert_allclose(clf.predict_proba(X), H / H.sum(axis=1, keepdims=True),
                               atol=1e-9)
    R = -clf.tau_ @ clf.mu_ + clf.lambda_ @ np.abs(clf.mu_) + most_violated_bruteforce(V).max()
    assert clf.upper_ == pytest.approx(R, abs=1e-9)
    proba = clf.predict_proba(X)
    loss = 1 - proba[np.arange(len(y)), y].mean()
    assert clf.get_lower_bound() <= loss + 1e-9 <= clf.upper_ + 2e-9
    # one-hot features are another LP: the same R* only by accident
    one_hot = MRCCCG(phi=phi, n_components=8, **EXACT).fit(X, y)
    assert abs(one_hot.upper_ - _full_lp_R(one_hot, X, y)) < 1e-7


def test_one_hot_false_is_one_hot_for_more_classes():
    X, y = _data(60, 3, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = MRCCCG(one_hot=False, **EXACT).fit(X, y)
    b = MRCCCG(**EXACT).fit(X, y)
    np.testing.assert_array_equal(a.mu_, b.mu_)
    assert a.label_embedding_ is None


@pytest.mark.parametrize("sparse_input, compact", [(True, False), (False, True), (True, True)])
def test_array_generic_backend_matches_the_kernel(sparse_input, compact):
    """The array-generic (GPU) path, run on NumPy, gives the CPU kernel's model, also for
    sparse psi and the compact binary features."""
    from exactclf._backend import CPU, REFERENCE
    from exactclf.mrc._ccg import mrc_ccg

    X, y = _sparse_data(200, 2, seed=11)
    Psi = np.c_[np.ones(len(X)), X]
    Psi = sp.csr_matrix(Psi) if sparse_input else Psi
    B = np.array([[-1.0], [1.0]]) if compact else None
    tau, lam = mrc_statistics(Psi, y, 2, 0.3, embedding=B)
    a = mrc_ccg(Psi, y, 2, tau, lam, embedding=B, eps1=1e-9, tol=1e-9, backend=CPU)
    b = mrc_ccg(Psi, y, 2, tau, lam, embedding=B, eps1=1e-9, tol=1e-9, backend=REFERENCE)
    assert a.n_iter == b.n_iter and a.n_constraints == b.n_constraints
    np.testing.assert_allclose(a.mu, b.mu, atol=1e-12)
    R_star = _reference_embedded(np.c_[np.ones(len(X)), X], y,
                                 np.eye(2) if B is None else B, 0.3)
    assert abs(a.upper - R_star) < 1e-7 and a.lower <= R_star + 1e-9
