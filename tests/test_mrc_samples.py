"""The 0-1 MRC over whole samples (exactclf/mrc/_samples.py, _ipm_compact.py) against the
full LP with all 2^K - 1 subset rows of every sample, and the certificates it produces."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.datasets import make_classification

import exactclf.mrc._ccg as _ccg
import exactclf.mrc._estimator as _estimator
import exactclf.mrc._ipm_compact as _ipm_compact
import exactclf.mrc._samples as _samples
from exactclf import verify
from exactclf.mrc import MRCCCG, mrc_full_lp, mrc_statistics
from exactclf.mrc._ipm import warm_or_cold
from exactclf.mrc._ipm_compact import compact_mrc_ipm
from exactclf.mrc._samples import layer_cake_rows


def _instance(seed: int):
    """Small MRC data: integer grids, duplicated rows, features of 1e-2 to 1e2, 2-5 classes."""
    rng = np.random.default_rng(seed)
    n, K, d = int(rng.integers(6, 40)), int(rng.integers(2, 6)), int(rng.integers(1, 4))
    X = rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-2, 2, size=d)
    if seed % 3 == 0:
        X = np.round(X)  # ties
    if seed % 4 == 1:
        X[n // 2:] = X[:n - n // 2]  # duplicated inputs, perhaps with other labels
    Psi = np.c_[np.ones(n), X]
    y = np.r_[np.arange(K), rng.integers(0, K, n - K)]
    return Psi, y, K


def _program_inputs(Psi, y, K, tau, lam):
    d = Psi.shape[1]
    centroids = np.array([Psi[y == c].mean(axis=0) for c in range(K)])
    T, L = tau.reshape(K, d), lam.reshape(K, d)
    return centroids, L - T, T + L


@pytest.mark.parametrize("seed", range(24))
def test_compact_ipm_matches_the_full_lp(seed):
    # all samples, every subset through their K + 1 rows: the full MRC LP's value
    Psi, y, K = _instance(seed)
    tau, lam = mrc_statistics(Psi, y, K, 0.3)
    full = mrc_full_lp(Psi, y, K, tau, lam, tol=1e-9)
    centroids, c1, c2 = _program_inputs(Psi, y, K, tau, lam)
    inf = np.full(c1.shape, np.inf)
    res = compact_mrc_ipm(Psi, centroids, c1, c2, inf, inf, tol=1e-9)
    assert res.converged
    assert abs(res.objective - full.objective) <= 1e-5 * full.objective
    # the duals: a distribution over the rows (nu's column), pi_i >= max_y y_iy
    assert abs(res.y.sum() - 1.0) <= 1e-6
    assert np.all(res.pi >= res.y[:, :-1].max(axis=0) - 1e-8)


@pytest.mark.parametrize("seed", range(6))
def test_class_grams_with_and_without_the_column_pairs(monkeypatch, seed):
    # Psi^T diag(w_y) Psi by the kept products of column pairs and by a product per class:
    # both the definition (relative to the entries' scale), and the same solve either way
    Psi, y, K = _instance(seed)
    rng = np.random.default_rng(seed)
    W = rng.random((K, len(y))) * 10.0 ** rng.uniform(-3, 3, size=(K, 1))
    want = np.einsum("ij,yi,ik->yjk", Psi, W, Psi)
    tau, lam = mrc_statistics(Psi, y, K, 0.3)
    centroids, c1, c2 = _program_inputs(Psi, y, K, tau, lam)
    inf = np.full(c1.shape, np.inf)
    results = []
    for limit in (_ipm_compact._PAIRS_MAX_ENTRIES, 0):
        monkeypatch.setattr(_ipm_compact, "_PAIRS_MAX_ENTRIES", limit)
        rows = _ipm_compact._Rows(Psi, centroids)
        assert (rows._pairs is None) == (limit == 0)
        scale = np.einsum("ij,yi,ij->y", np.abs(Psi), W, np.abs(Psi)).max()
        np.testing.assert_allclose(rows.grams(W), want, rtol=0, atol=1e-13 * scale)
        results.append(compact_mrc_ipm(Psi, centroids, c1, c2, inf, inf, tol=1e-9))
    assert all(r.converged for r in results)
    # (each to the IPM's accuracy, as against the full LP above)
    assert abs(results[0].objective - results[1].objective) <= 1e-5 * abs(results[1].objective)


def _compact_lp_by_highs(Psi, centroids, c1, c2, u1, u2):
    """The LP of exactclf.mrc._ipm_compact written out for HiGHS."""
    s, d = Psi.shape
    K = centroids.shape[0]
    m = K * d
    rows = []
    for i in range(s):
        for y in range(K):
            a = np.zeros(m)
            a[y * d:(y + 1) * d] = Psi[i]
            w = np.zeros(s * K)
            w[i * K + y] = -1.0
            rows.append((np.r_[a, -a, -1.0, w], -1.0))
    for y in range(K):
        a = np.zeros(m)
        a[y * d:(y + 1) * d] = centroids[y]
        rows.append((np.r_[a, -a, -1.0, np.zeros(s * K)], 0.0))
    for i in range(s):
        w = np.zeros(s * K)
        w[i * K:(i + 1) * K] = 1.0
        rows.append((np.r_[np.zeros(2 * m + 1), w], 1.0))
    A = np.array([r for r, _ in rows])
    b = np.array([v for _, v in rows])
    c = np.r_[c1.ravel(), c2.ravel(), 1.0, np.zeros(s * K)]
    bounds = ([(0, u) for u in u1.ravel()] + [(0, u) for u in u2.ravel()] + [(None, None)]
              + [(0, None)] * (s * K))
    return linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs").fun


@pytest.mark.parametrize("seed", range(8))
def test_compact_ipm_with_bounds_and_a_subset_of_samples_matches_highs(seed):
    # the generation's restricted LPs: some samples only, a box on mu that may bind
    Psi, y, K = _instance(seed)
    tau, lam = mrc_statistics(Psi, y, K, 0.3)
    centroids, c1, c2 = _program_inputs(Psi, y, K, tau, lam)
    rng = np.random.default_rng(seed)
    keep = rng.permutation(len(y))[:max(1, len(y) // 2)]
    top = np.abs(Psi).max(axis=0)
    u = rng.uniform(0.01, 2.0, size=c1.shape) / np.where(top > 0.0, top, 1.0)
    res = compact_mrc_ipm(Psi[keep], centroids, c1, c2, u, u, tol=1e-9)
    ref = _compact_lp_by_highs(Psi[keep], centroids, c1, c2, u, u)
    assert res.converged
    assert abs(res.objective - ref) <= 1e-5 * abs(ref)


@pytest.mark.parametrize("forced", [False, True])
@pytest.mark.parametrize("seed", range(16))
def test_a_warm_start_from_other_samples_reaches_the_lp_value(monkeypatch, seed, forced):
    # the generation's next LP: a sample of the last one deleted, all the others new (many
    # violated at the kept iterate, with entries that change the columns' scaling), the box
    # the same (finite on even seeds); started from the last solve's kept iterate, forced
    # to start there however violated (else it starts cold when too far)
    if forced:
        monkeypatch.setattr(_ipm_compact, "_WARM_VIOLATION", np.inf)
    Psi, y, K = _instance(seed)
    tau, lam = mrc_statistics(Psi, y, K, 0.3)
    centroids, c1, c2 = _program_inputs(Psi, y, K, tau, lam)
    rng = np.random.default_rng(seed)
    n = len(y)
    top = np.abs(Psi).max(axis=0)
    u = (rng.uniform(0.01, 2.0, size=c1.shape) / np.where(top > 0.0, top, 1.0)
         if seed % 2 == 0 else np.full(c1.shape, np.inf))
    first = rng.permutation(n)[:max(1, n // 3)]
    res1 = compact_mrc_ipm(Psi[first], centroids, c1, c2, u, u, tol=1e-9)
    assert res1.converged and res1.start is not None
    second = np.r_[first[1:], np.setdiff1d(np.arange(n), first)]
    where = np.full(n, -1)
    where[first] = np.arange(len(first))
    start = res1.start.samples_for(where[second])
    assert np.isnan(start.pi).sum() == n - len(first)
    solve = partial(compact_mrc_ipm, Psi[second], centroids, c1, c2, u, u, tol=1e-9)
    ref = _compact_lp_by_highs(Psi[second], centroids, c1, c2, u, u)
    warm = solve(start=start, time_limit=None)
    assert warm.started_warm or not forced
    if warm.converged:
        assert abs(warm.objective - ref) <= 1e-5 * abs(ref)
    # what the sample program gets: a warm start that stalls short of convergence is
    # repeated cold (seed 12 stalls at a merit of 4.7e-6 on an AMD EPYC's BLAS kernels)
    res2 = warm_or_cold(solve, start, None)
    assert res2.converged
    assert abs(res2.objective - ref) <= 1e-5 * abs(ref)


@pytest.mark.parametrize("seed", range(10))
def test_layer_cake_rows_rebuild_the_distribution_and_its_value(seed):
    rng = np.random.default_rng(seed)
    P = rng.random((7, 5)) * (rng.random((7, 5)) < 0.7)
    P[0] = 0.25  # ties throughout
    P[1, :2] = P[1, 2]  # ties with the top
    sample = np.arange(10, 17)
    s, Q, values, weights = layer_cake_rows(P, sample)
    rebuilt = np.zeros_like(P)
    np.add.at(rebuilt, s - 10, weights[:, None] * Q)
    np.testing.assert_allclose(rebuilt, P, rtol=1e-12, atol=0.0)
    # each row uniform on its subset, value 1 - 1/|C|
    sizes = (Q > 0).sum(axis=1)
    np.testing.assert_allclose(Q.max(axis=1) * sizes, 1.0, rtol=1e-12)
    np.testing.assert_allclose(values, 1.0 - 1.0 / sizes, rtol=1e-12)
    by_sample = np.bincount(s - 10, weights=weights * values, minlength=7)
    np.testing.assert_allclose(by_sample, P.sum(axis=1) - P.max(axis=1), rtol=1e-12,
                               atol=1e-15)


@pytest.mark.parametrize("seed, K", [(0, 3), (1, 8), (2, 9), (3, 8)])
def test_generation_over_whole_samples_brackets_the_full_lp(seed, K):
    rng = np.random.default_rng(seed)
    n = 40
    X = rng.standard_normal((n, 2))
    if seed % 2:
        X = np.round(2.0 * X)
    Psi = np.c_[np.ones(n), X]
    y = np.r_[np.arange(K), rng.integers(0, K, n - K)]
    tau, lam = mrc_statistics(Psi, y, K, 0.3)
    full = mrc_full_lp(Psi, y, K, tau, lam, tol=1e-9)
    res = _ccg.mrc_ccg(Psi, y, K, tau, lam, eps1=1e-5, tol=1e-9, n_max=5,
                       whole_samples=True)
    # (HiGHS' value is exact to rounding: 1e-9 relative)
    assert res.converged
    assert res.lower <= full.objective * (1 + 1e-9) and full.objective <= res.upper * (1 + 1e-9)
    assert res.upper - res.lower <= 2e-5 * full.objective
    sample, Q, values, alpha, class_alpha = res.dual_rows
    assert abs(alpha.sum() + class_alpha.sum() - 1.0) <= 1e-12
    assert np.all(np.isin(np.round(Q.max(axis=1) * (Q > 0).sum(axis=1), 12), 1.0))


def _ten_classes(n=600, seed=0):
    X, y = make_classification(n_samples=n, n_features=4, n_informative=4, n_redundant=0,
                               n_classes=10, n_clusters_per_class=1, random_state=seed)
    return X, y


def _spy(monkeypatch):
    calls = []
    real = _samples.SampleProgram.solve

    def solve(self, it, remaining):
        calls.append(len(self.samples))
        return real(self, it, remaining)

    monkeypatch.setattr(_samples.SampleProgram, "solve", solve)
    return calls


def test_estimator_with_many_classes_uses_whole_samples_and_proves_r_star(monkeypatch):
    X, y = _ten_classes()
    calls = _spy(monkeypatch)
    clf = MRCCCG().fit(X, y)
    assert calls, "the default 10-class fit did not take the whole-sample program"
    assert clf.converged_ and clf.certificate_.is_optimal
    report = verify(clf, X, y)
    assert report.ok, [c for c in report.checks if not c.passed]
    # the subset rows' generation proves the same R*: the intervals meet
    monkeypatch.setattr(_ccg, "whole_samples_fit", lambda *args: False)
    calls.clear()
    other = MRCCCG().fit(X, y)
    assert not calls
    assert clf.lower_ <= other.upper_ and other.lower_ <= clf.upper_
    assert abs(clf.upper_ - other.upper_) <= 2 * (clf.eps1 + clf.tol) * other.upper_


def test_whole_samples_certificate_is_invariant(monkeypatch):
    # permuted rows, renamed classes, duplicated rows as integer weights: the same R*
    X, y = _ten_classes(n=300, seed=1)
    calls = _spy(monkeypatch)
    base = MRCCCG().fit(X, y)
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(y))
    names = np.array([f"c{9 - k}" for k in range(10)])
    renamed = MRCCCG().fit(X[perm], names[y[perm]])
    twice = np.r_[np.arange(len(y)), np.arange(20)]
    weights = np.ones(len(y))
    weights[:20] = 2.0
    duplicated = MRCCCG().fit(X[twice], y[twice])
    weighted = MRCCCG().fit(X, y, sample_weight=weights)
    assert len(calls) >= 4
    tol = 2 * (base.eps1 + base.tol) * base.upper_
    for clf in (renamed,):
        assert clf.lower_ <= base.upper_ and base.lower_ <= clf.upper_
        assert abs(clf.upper_ - base.upper_) <= tol
    assert duplicated.lower_ <= weighted.upper_ and weighted.lower_ <= duplicated.upper_
    assert abs(duplicated.upper_ - weighted.upper_) <= tol
    for clf, Xc, yc, w in ((renamed, X[perm], names[y[perm]], None),
                           (weighted, X, y, weights)):
        assert verify(clf, Xc, yc, sample_weight=w).ok


def test_sparse_input_gives_the_same_whole_sample_fit(monkeypatch):
    X, y = _ten_classes(n=300, seed=2)
    calls = _spy(monkeypatch)
    dense = MRCCCG().fit(X, y)
    sparse = MRCCCG().fit(sp.csr_matrix(X), y)
    assert len(calls) >= 2
    assert abs(dense.upper_ - sparse.upper_) <= 2 * (dense.eps1 + dense.tol) * dense.upper_


@pytest.mark.parametrize("stop", [{"max_iter": 1}, {"time_limit": 1.0}])
def test_a_stopped_whole_sample_fit_keeps_certified_bounds(monkeypatch, stop):
    X, y = _ten_classes(n=2000, seed=3)
    calls = _spy(monkeypatch)
    clf = MRCCCG(eps1=1e-5, **stop).fit(X, y)
    assert 0.0 <= clf.lower_ <= clf.upper_
    assert verify(clf, X, y).ok
    if "max_iter" in stop:
        assert len(calls) == 1


def test_an_unsolved_lp_hands_over_to_the_subset_rows(monkeypatch):
    K = 8
    rng = np.random.default_rng(5)
    Psi = np.c_[np.ones(40), rng.standard_normal((40, 2))]
    y = np.r_[np.arange(K), rng.integers(0, K, 32)]
    tau, lam = mrc_statistics(Psi, y, K, 0.3)
    real = _samples.compact_mrc_ipm

    def stalls(*args, **kwargs):
        res = real(*args, **kwargs)
        res.converged, res.merit = False, 1e-2
        return res

    monkeypatch.setattr(_samples, "compact_mrc_ipm", stalls)
    res = _ccg.mrc_ccg(Psi, y, K, tau, lam, eps1=1e-5, tol=1e-9, whole_samples=True)
    full = mrc_full_lp(Psi, y, K, tau, lam, tol=1e-9)
    assert res.converged
    assert res.lower <= full.objective * (1 + 1e-9) and full.objective <= res.upper * (1 + 1e-9)


def _eight_classes_generation(seed: int):
    """40 samples of 8 classes, 2 features: the data, the full LP and the whole samples'
    generation."""
    rng = np.random.default_rng(seed)
    K, n = 8, 40
    Psi = np.c_[np.ones(n), rng.standard_normal((n, 2))]
    y = np.r_[np.arange(K), rng.integers(0, K, n - K)]
    tau, lam = mrc_statistics(Psi, y, K, 0.3)
    full = mrc_full_lp(Psi, y, K, tau, lam, tol=1e-9)
    res = _ccg.mrc_ccg(Psi, y, K, tau, lam, eps1=1e-5, tol=1e-9, whole_samples=True)
    return Psi, y, K, tau, lam, full, res


@pytest.mark.parametrize("one_column", [False, True])
def test_the_final_dual_point_from_a_seed_proves_r_star(monkeypatch, one_column):
    # the generation's dual point seeds the certificate's dual LP: row by row, or (large
    # seeds) as one column spread over its rows again; either way a valid, tight bound
    import exactclf.mrc._bounds as _bounds

    Psi, y, K, tau, lam, full, res = _eight_classes_generation(7)
    n = len(y)
    if one_column:
        monkeypatch.setattr(_bounds, "_SEED_ENTRIES", 0)
    V = Psi @ res.mu.reshape(K, -1).T
    point = _bounds.dual_point(Psi, y, K, tau, lam, V, tol=1e-9, seed=res.dual_rows,
                               zero_tol=1e-12)
    assert full.objective - 1e-6 <= point.bound <= full.objective * (1 + 1e-9)
    assert np.all(point.alpha > 0) and np.all(np.isin(point.sample, np.arange(n)))
    sizes = (point.Q > 0).sum(axis=1)
    np.testing.assert_allclose(point.Q.max(axis=1) * sizes, 1.0, rtol=1e-12)


def test_a_final_dual_lp_out_of_time_keeps_the_seed():
    # a fit stopped by its time limit leaves the certificate's dual LP no time: the point it
    # returns is then the seed's (the generation's best bound, priced and re-checkable), not
    # the class-average rows' alone
    import time

    import exactclf.mrc._bounds as _bounds

    Psi, y, K, tau, lam, full, res = _eight_classes_generation(3)
    V = Psi @ res.mu.reshape(K, -1).T
    late = _bounds.dual_point(Psi, y, K, tau, lam, V, tol=1e-9, seed=res.dual_rows,
                              zero_tol=1e-12, upper=np.inf, deadline=time.perf_counter() - 1)
    alone = _bounds.dual_point(Psi, y, K, tau, lam, V, tol=1e-9, zero_tol=1e-12,
                               deadline=time.perf_counter() - 1)
    assert alone.bound < full.objective - 1e-3  # (no LP solved: the class rows' bound)
    assert full.objective - 1e-6 <= late.bound <= full.objective * (1 + 1e-9)
    assert np.all(np.isin(late.sample, res.dual_rows[0]))


def test_a_fit_stopped_after_its_first_lp_has_a_recheckable_bound(monkeypatch):
    # the time limit falls inside the second solve, leaving the certificate's dual LP no
    # time: lower_ is the first solve's dual point, its witness the rows (not "none"), and
    # verify re-derives it
    X, y = _ten_classes(n=600, seed=2)
    calls = _spy(monkeypatch)
    real = _samples.SampleProgram.solve
    asked = []

    def solve(self, it, remaining):
        asked.append(it)
        return None if it > 1 else real(self, it, remaining)  # (the time limit's answer)

    monkeypatch.setattr(_samples.SampleProgram, "solve", solve)
    # (and no time left for the certificate's dual LP)
    monkeypatch.setattr(_estimator, "_DUAL_SHARE", 0.0)
    monkeypatch.setattr(_estimator, "_DUAL_MIN_SECONDS", 0.0)
    with pytest.warns(Warning):
        # (n_max=2: a first LP of 10 samples leaves a gap of 0.15 %; with 25 it can prove)
        clf = MRCCCG(n_max=2, time_limit=60, random_state=0).fit(X, y)
    assert asked == [1, 2]
    assert calls and clf.lower_ > 0.0
    assert clf.certificate_.witness.kind == "mrc_dual"
    assert verify(clf, X, y)
