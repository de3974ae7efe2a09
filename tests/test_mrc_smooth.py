"""The smoothed start of the 0-1 MRC generation with many classes (exactclf.mrc._smooth):
its gradient, its certified points, and a generation started there that reaches the full LP's
optimum and keeps the start's point when stopped or interrupted."""

import time

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from test_mrc import _exact_R

from exactclf._certificate import StopReason
from exactclf.mrc import MRCCCG, _ccg, mrc_full_lp, mrc_statistics
from exactclf.mrc._bounds import minimax_risk
from exactclf.mrc._smooth import SMOOTH_MIN_CLASSES, _smoothed_risk, smoothed_start
from exactclf.mrc._training import TrainingSet


def _data(n=400, K=SMOOTH_MIN_CLASSES, p=6, seed=0, embedding=None):
    X, y = make_classification(n_samples=n, n_features=p, n_informative=p - 1,
                               n_redundant=0, n_classes=K, n_clusters_per_class=1,
                               random_state=seed)
    Psi = np.c_[np.ones(n), StandardScaler().fit_transform(X)]
    tau, lam = mrc_statistics(Psi, y, K, 0.3, embedding=embedding)
    return Psi, y, TrainingSet(Psi, y, K, tau, lam, embedding=embedding)


def _risk(data):
    def risk(mu):
        ev = minimax_risk(data.Psi, mu, data.tau, data.lam, data.K, embedding=data.B)
        return ev.R, mu, ev.nu
    return risk


@pytest.mark.parametrize("embedding", [None, "random"])
def test_smoothed_risk_gradient_matches_finite_differences(embedding):
    rng = np.random.default_rng(1)
    B = rng.normal(size=(SMOOTH_MIN_CLASSES, 5)) if embedding == "random" else None
    _, _, data = _data(n=60, embedding=B)
    x = rng.uniform(0.0, 0.3, 2 * data.m)
    gamma = 40.0
    f, g = _smoothed_risk(x, gamma, data, np.ascontiguousarray(data.Psi.T))
    for j in rng.choice(2 * data.m, 12, replace=False):
        h = 1e-7 * max(1.0, abs(x[j]))
        e = np.zeros_like(x)
        e[j] = h
        fd = (_smoothed_risk(x + e, gamma, data, data.Psi.T)[0]
              - _smoothed_risk(x - e, gamma, data, data.Psi.T)[0]) / (2 * h)
        assert fd == pytest.approx(g[j], rel=1e-4, abs=1e-6)
    # where mu1 and mu2 do not overlap (at every minimum), the log-sum-exp is above the
    # certified R and at most log(n) / gamma above it
    z = rng.normal(0.0, 0.3, data.m)
    f = _smoothed_risk(np.r_[np.maximum(z, 0), np.maximum(-z, 0)], gamma, data, data.Psi.T)[0]
    R = _risk(data)(z)[0]
    assert R - 1e-12 <= f <= R + np.log(60) / gamma + 1e-12


@pytest.mark.slow  # (16 s; CI runs the slow tests)
def test_smoothed_start_points_are_certified_and_near_the_optimum():
    Psi, y, data = _data()
    seen = []
    R, mu, nu = smoothed_start(data, _risk(data), 1e-4, record=seen.append)
    assert (R, nu) == _risk(data)(mu)[::2]  # the exact R of the point returned
    assert seen and seen[-1][0] == R and np.all(np.diff([p[0] for p in seen]) < 0)
    full = mrc_full_lp(Psi, y, data.K, data.tau, data.lam, tol=1e-9)
    uniform = 1.0 - 1.0 / data.K
    assert full.objective <= R < uniform
    # most of the way from the uniform rule to R*
    assert R - full.objective <= 0.1 * (uniform - full.objective)


def test_smoothed_start_stops_at_its_deadline():
    _, _, data = _data()
    R, mu, _ = smoothed_start(data, _risk(data), 1e-4, deadline=time.perf_counter() - 1.0)
    assert not mu.any() and R == pytest.approx(1.0 - 1.0 / data.K)  # no stage: mu = 0


@pytest.mark.parametrize("step", [0.25, 1.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generation_from_the_start_reaches_the_full_lp(seed, step, monkeypatch):
    """With rows sought between the best iterate and the LP's (step < 1) or at the LP's."""
    monkeypatch.setattr(_ccg, "_SEPARATION_STEP", step)
    Psi, y, data = _data(n=120, p=4, seed=seed)
    res = _ccg.mrc_ccg(Psi, y, data.K, data.tau, data.lam, eps1=1e-9, tol=1e-9)
    full = mrc_full_lp(Psi, y, data.K, data.tau, data.lam, tol=1e-9)
    assert res.converged
    assert res.upper == pytest.approx(full.objective, abs=1e-7)
    assert res.lower == pytest.approx(full.objective, abs=1e-7)
    assert res.upper == _risk(data)(res.mu)[0]


@pytest.mark.parametrize("step", [0.3, 0.5, 1.0])
def test_rows_sought_after_a_start_cut_off_the_iterate(step, monkeypatch):
    """Every row added after a start is violated at the LP's iterate by more than eps1 (a
    cut of its optimum), by at least its violation at the separation point over the step."""
    monkeypatch.setattr(_ccg, "_SEPARATION_STEP", step)
    Psi, y, data = _data(n=300, p=5, seed=3)
    program = _ccg.ZeroOneProgram(data, eps1=1e-6, eps2=1e-6, n_max=40, m_max=100, tol=1e-9)
    start = smoothed_start(data, program.risk, 1e-6)
    program.start_from(start)
    mu = program.solve(1, None)[1]
    nu = program.res.x[0]  # the LP's (the certified point's nu is its largest violation)
    idx, masks, _ = program._rows_to_add(start)
    assert len(idx) == 40
    V = Psi @ mu.reshape(data.K, -1).T
    size = np.asarray(masks).sum(axis=1)
    at_iterate = (np.where(masks, V[idx], 0.0).sum(axis=1) - 1.0) / size + 1.0 - nu
    assert np.all(at_iterate > 1e-6)
    # rows of distinct samples, none already in the LP
    assert len(set(idx)) == len(idx)
    if step == 1.0:  # at the iterate: the most violated samples, with their worst subsets
        g = program.ev.g - nu
        assert np.allclose(np.sort(at_iterate), np.sort(g[idx]))
        assert np.min(at_iterate) >= np.sort(g)[-40] - 1e-12


def test_fit_with_a_start_is_certified_like_one_without(monkeypatch):
    Psi, y, data = _data(n=300, p=5)
    X = Psi[:, 1:]
    clf = MRCCCG(eps1=1e-7, tol=1e-9).fit(X, y)
    monkeypatch.setattr(_ccg, "SMOOTH_MIN_CLASSES", 10**9)
    ref = MRCCCG(eps1=1e-7, tol=1e-9).fit(X, y)
    assert clf.converged_ and ref.converged_
    assert clf.upper_ == pytest.approx(ref.upper_, abs=1e-6)
    assert clf.lower_ == pytest.approx(ref.lower_, abs=1e-6)
    assert clf.upper_ == pytest.approx(_exact_R(clf, X, y)[0], rel=1e-12)


def test_interrupt_during_the_start_keeps_its_best_point(monkeypatch):
    Psi, y, data = _data(n=300, p=5)
    X = Psi[:, 1:]
    real = _ccg.smoothed_start

    def interrupted(*args, **kwargs):
        real(*args, **kwargs)  # records its points
        raise KeyboardInterrupt

    monkeypatch.setattr(_ccg, "smoothed_start", interrupted)
    with pytest.warns(UserWarning, match="interrupt"):
        clf = MRCCCG().fit(X, y)
    assert clf.stop_reason_ == StopReason.INTERRUPTED and clf.n_iter_ == 0
    assert clf.upper_ < 1.0 - 1.0 / data.K - 1e-3  # the start's point, not the uniform rule
    assert clf.upper_ == pytest.approx(_exact_R(clf, X, y)[0], rel=1e-12)


def test_time_limit_inside_the_start_returns_its_point(monkeypatch):
    """The start takes its share of time_limit; when it (here made slow) outlasts the whole
    limit, the fit returns the start's certified point."""
    Psi, y, data = _data(n=300, p=5)
    X = Psi[:, 1:]
    real = _ccg.smoothed_start

    def slow(*args, **kwargs):
        point = real(*args, **kwargs)
        time.sleep(1.1)
        return point

    monkeypatch.setattr(_ccg, "smoothed_start", slow)
    with pytest.warns(ConvergenceWarning, match="time_limit"):
        clf = MRCCCG(time_limit=1.0).fit(X, y)
    assert clf.stop_reason_ == StopReason.TIME_LIMIT and clf.n_iter_ == 0
    assert clf.upper_ < 1.0 - 1.0 / data.K - 1e-3
    assert clf.upper_ == pytest.approx(_exact_R(clf, X, y)[0], rel=1e-12)


def test_sparse_features_give_the_same_start_and_optimum():
    import scipy.sparse as sp

    Psi, y, data = _data(n=150, p=4, seed=3)
    Psi[np.abs(Psi) < 0.5] = 0.0  # zeros for the sparse format to keep
    Psi[:, 0] = 1.0
    tau, lam = mrc_statistics(Psi, y, data.K, 0.3)
    dense = _ccg.mrc_ccg(Psi, y, data.K, tau, lam, eps1=1e-9, tol=1e-9)
    sparse = _ccg.mrc_ccg(sp.csr_matrix(Psi), y, data.K, tau, lam, eps1=1e-9, tol=1e-9)
    assert dense.converged and sparse.converged
    assert sparse.upper == pytest.approx(dense.upper, abs=1e-7)
    assert sparse.lower == pytest.approx(dense.lower, abs=1e-7)


def test_start_keeps_the_certificate_invariant_to_row_order_and_class_names():
    Psi, y, data = _data(n=300, p=5, seed=4)
    X = Psi[:, 1:]
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(y))
    names = np.array([f"class {k}" for k in rng.permutation(data.K)])
    fits = [MRCCCG(eps1=1e-7, tol=1e-9).fit(X, y),
            MRCCCG(eps1=1e-7, tol=1e-9).fit(X[perm], y[perm]),
            MRCCCG(eps1=1e-7, tol=1e-9).fit(X, names[y])]
    for clf in fits:
        assert clf.converged_
        assert clf.upper_ == pytest.approx(fits[0].upper_, abs=1e-6)
        assert clf.lower_ == pytest.approx(fits[0].lower_, abs=1e-6)
    assert np.mean(fits[2].predict(X) == names[y]) == pytest.approx(
        np.mean(fits[0].predict(X) == y), abs=0.02)
