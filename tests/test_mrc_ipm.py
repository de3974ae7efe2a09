"""The dense interior point method of the restricted 0-1 MRC LP (exactclf.mrc._ipm), against
HiGHS on the same LPs, and the generation that uses it against the full LP."""

import dataclasses

import numpy as np
import pytest
from scipy.optimize import linprog
from test_mrc import EXACT, _assert_certified, _data

from exactclf.mrc import MRCCCG, _ccg
from exactclf.mrc._ipm import dense_mrc_ipm
from exactclf.mrc._lp import HighsLP


def _instance(seed, bounded=None):
    """A random LP of the MRC form: rows of several kinds (Gaussian, an integer grid with
    repeated rows, a zero column), values ``1/|C| - 1``, costs ``-(tau - lam), tau + lam``,
    and upper bounds on every column (the generation's box) or on some or none; bounded by
    construction (``tau`` is a dual feasible ``F^T y0``). With ``lam = 0`` the pair
    ``x1, x2`` of a feature without bounds may grow together at no cost, which an interior
    point method follows into cancellation: such features get ``lam = 0`` only where
    ``bounded`` is False (None: a choice by ``seed``)."""
    rng = np.random.default_rng(seed)
    r, n = int(rng.integers(1, 60)), int(rng.integers(1, 40))
    kind = seed % 3
    if kind == 0:
        F = rng.normal(size=(r, n))
    elif kind == 1:
        F = rng.integers(-1, 3, size=(r, n)).astype(float)
        F[r // 2:] = F[:r - r // 2]  # repeated rows
    else:
        F = rng.uniform(0.0, 1.0, size=(r, n)) * (rng.random((r, n)) < 0.5)
        F[:, 0] = 0.0
    F *= 10.0 ** rng.integers(-2, 3)
    b = 1.0 / rng.integers(1, 6, size=r) - 1.0
    free_zero = bounded is False
    bounded = rng.random() < 0.5 if bounded is None else bounded
    u = np.where(rng.random(n) < (1.0 if bounded else 0.5), rng.uniform(0.1, 3.0, size=n),
                 np.inf)
    zero = (rng.random(n) < 0.3) & (np.isfinite(u) | free_zero)
    lam = np.where(zero, 0.0, rng.uniform(0.01, 0.3, size=n))
    y0 = rng.dirichlet(np.ones(r))
    tau = F.T @ y0 + rng.uniform(-1.0, 1.0, size=n) * lam
    return F, b, -(tau - lam), tau + lam, u, u.copy()


def _highs(F, b, c1, c2, u1, u2):
    r, n = F.shape
    res = linprog(np.r_[1.0, c1, c2], A_ub=np.c_[-np.ones(r), F, -F], b_ub=b,
                  bounds=[(None, None)] + [(0, v if np.isfinite(v) else None)
                                           for v in np.r_[u1, u2]], method="highs")
    assert res.status == 0
    return res.fun


@pytest.mark.parametrize("seed", range(40))
def test_dense_ipm_matches_highs(seed):
    F, b, c1, c2, u1, u2 = _instance(seed)
    ipm = dense_mrc_ipm(F, b, c1, c2, u1, u2)
    ref = _highs(F, b, c1, c2, u1, u2)
    scale = 1.0 + abs(ref)
    assert ipm.converged
    assert ipm.objective == pytest.approx(ref, abs=1e-6 * scale)
    # the point is primal feasible (rows by nu, bounds after snapping) ...
    x1, x2 = ipm.x1, ipm.x2
    assert np.all(x1 >= 0) and np.all(x2 >= 0) and np.all(x1 <= u1) and np.all(x2 <= u2)
    assert np.max(F @ (x1 - x2) - ipm.nu - b) <= 1e-6 * (1.0 + np.abs(b).max())
    # ... and the row duals are weights summing to 1 whose dual value is the optimum
    assert np.all(ipm.y >= 0) and ipm.y.sum() == pytest.approx(1.0, abs=1e-7)
    v1, v2 = np.maximum(-ipm.d1, 0.0), np.maximum(-ipm.d2, 0.0)
    dual = -b @ ipm.y - np.where(np.isfinite(u1), u1, 0.0) @ v1 \
        - np.where(np.isfinite(u2), u2, 0.0) @ v2
    assert dual == pytest.approx(ref, abs=1e-5 * scale)


@pytest.mark.parametrize("seed", range(10))
def test_dense_ipm_without_bounds_or_costs_never_claims_a_wrong_optimum(seed):
    """Features free of bounds and of cost (``lam = 0``): converged or not, never a wrong
    value where it says converged (the generation then falls back on HiGHS)."""
    F, b, c1, c2, u1, u2 = _instance(seed, bounded=False)
    ipm = dense_mrc_ipm(F, b, c1, c2, u1, u2)
    if ipm.converged:
        ref = _highs(F, b, c1, c2, u1, u2)
        assert ipm.objective == pytest.approx(ref, abs=1e-5 * (1.0 + abs(ref)))


def test_dense_ipm_rows_it_calls_inactive_can_go():
    """Rows whose slack exceeds their dual are inactive: without them the LP keeps its
    value (what row deletion in the generation relies on)."""
    for seed in range(0, 30, 3):
        F, b, c1, c2, u1, u2 = _instance(seed)
        ipm = dense_mrc_ipm(F, b, c1, c2, u1, u2)
        keep = ~(ipm.s > ipm.y)
        if keep.all() or not keep.any():
            continue
        ref = _highs(F, b, c1, c2, u1, u2)
        assert _highs(F[keep], b[keep], c1, c2, u1, u2) == pytest.approx(
            ref, abs=1e-6 * (1.0 + abs(ref)))


@pytest.mark.parametrize("seed", range(30))
def test_dense_ipm_warm_start_reaches_the_optimum(seed):
    """A solve started from the kept iterate of a previous LP with fewer rows, some rows
    dropped, in another order, and other upper bounds (as the generation changes its LP):
    the same optimum as HiGHS from scratch."""
    F, b, c1, c2, u1, u2 = _instance(seed, bounded=True)  # (every LP here bounded)
    rng = np.random.default_rng(seed)
    r = len(b)
    first = rng.permutation(r)[:r // 2 + 1]
    old = dense_mrc_ipm(F[first], b[first], c1, c2, u1, u2)
    assert old.warm is not None
    rows = rng.permutation(r)[:max(1, r - 2)]
    where = {int(i): k for k, i in enumerate(first)}
    start = old.warm.rows_for(np.array([where.get(int(i), -1) for i in rows]))
    assert np.isnan(start.y).sum() == np.isin(rows, first, invert=True).sum()
    scale_u = rng.uniform(0.5, 1.5, size=len(u1))
    u1, u2 = u1 * scale_u, u2 * scale_u
    ipm = dense_mrc_ipm(F[rows], b[rows], c1, c2, u1, u2, start=start)
    ref = _highs(F[rows], b[rows], c1, c2, u1, u2)
    assert ipm.converged
    assert ipm.objective == pytest.approx(ref, abs=1e-6 * (1.0 + abs(ref)))


def test_dense_ipm_stops_at_its_time_limit():
    F, b, c1, c2, u1, u2 = _instance(3)
    ipm = dense_mrc_ipm(F, b, c1, c2, u1, u2, time_limit=0.0)
    assert ipm.time_limit_reached and ipm.iterations == 1


@pytest.mark.parametrize("K", [3, 6])
def test_generation_on_the_dense_ipm_reaches_the_full_lp(monkeypatch, K):
    """Every solve by the dense interior point method (the LP counts as wide from the
    start): the same R* as the full LP, certified, and HiGHS solves none of the generation's
    LPs (the final dual point's own LP, by the primal simplex, may run)."""
    calls = []
    solve = HighsLP.solve
    monkeypatch.setattr(HighsLP, "solve",
                        lambda self, *a, **k: calls.append(a) or solve(self, *a, **k))
    monkeypatch.setattr(_ccg, "_IPM_COLUMNS", 0)
    X, y = _data(150, K, seed=K)
    clf = MRCCCG(n_max=20, **EXACT).fit(X, y)
    assert all(a[0] == "primal" for a in calls) and clf.n_iter_ > 1
    R_star = _assert_certified(clf, X, y, atol=1e-8)
    assert clf.converged_ and clf.upper_ == pytest.approx(R_star, abs=1e-7)
    assert clf.upper_ - clf.lower_ <= 1e-7


@pytest.mark.parametrize("dense", [True, False])
def test_a_start_on_the_dense_ipm_activates_every_feature(monkeypatch, dense):
    """After a smoothed start, a wide LP that the dense IPM takes gets every feature (so no
    inactive feature's small dual violation costs the bound), otherwise those where the
    start's mu is not 0 (column generation, m_max=5 of 12 features first); the certificate
    holds either way."""
    monkeypatch.setattr(_ccg, "SMOOTH_MIN_CLASSES", 2)
    monkeypatch.setattr(_ccg, "_IPM_COLUMNS", 0 if dense else 10 ** 9)
    X, y = _data(150, 3, d=3, seed=1)
    clf = MRCCCG(n_max=20, m_max=5, **EXACT).fit(X, y)
    assert (clf.n_active_features_ == 12) if dense else (clf.n_active_features_ < 12)
    R_star = _assert_certified(clf, X, y, atol=1e-8)
    assert clf.converged_ and clf.upper_ == pytest.approx(R_star, abs=1e-7)


def test_generation_retries_a_failed_warm_start_cold(monkeypatch):
    """A warm-started dense solve that does not converge is repeated from the cold start
    (not handed to HiGHS), and the generation still reaches the full LP's R*."""
    calls, warm_calls = [], []
    solve = HighsLP.solve
    monkeypatch.setattr(HighsLP, "solve",
                        lambda self, *a, **k: calls.append(a) or solve(self, *a, **k))
    ipm = _ccg.dense_mrc_ipm

    def failing_warm(*args, start=None, **kwargs):
        if start is None:
            return ipm(*args, **kwargs)
        warm_calls.append(1)
        return dataclasses.replace(ipm(*args, start=start, **kwargs), converged=False)

    monkeypatch.setattr(_ccg, "dense_mrc_ipm", failing_warm)
    monkeypatch.setattr(_ccg, "_IPM_COLUMNS", 0)
    X, y = _data(150, 3, seed=3)
    clf = MRCCCG(n_max=20, **EXACT).fit(X, y)
    assert warm_calls and all(a[0] == "primal" for a in calls)
    R_star = _assert_certified(clf, X, y, atol=1e-8)
    assert clf.converged_ and clf.upper_ == pytest.approx(R_star, abs=1e-7)


@pytest.mark.parametrize("share", [0.0, 1.01])
def test_after_a_start_dense_rows_go_to_the_dense_ipm(monkeypatch, share):
    """After a smoothed start, an LP below the wide size goes to the dense IPM where its
    rows' subsets hold at least ``_DENSE_SHARE`` of the classes (never above 1), and the
    certificate holds either way."""
    monkeypatch.setattr(_ccg, "SMOOTH_MIN_CLASSES", 2)
    monkeypatch.setattr(_ccg, "_DENSE_COLUMNS", 0)
    monkeypatch.setattr(_ccg, "_DENSE_SHARE", share)
    dense = []
    ipm = _ccg.dense_mrc_ipm
    monkeypatch.setattr(_ccg, "dense_mrc_ipm", lambda *a, **k: dense.append(1) or ipm(*a, **k))
    X, y = _data(150, 3, seed=2)
    clf = MRCCCG(n_max=20, **EXACT).fit(X, y)
    assert bool(dense) == (share <= 1.0)
    R_star = _assert_certified(clf, X, y, atol=1e-8)
    assert clf.converged_ and clf.upper_ == pytest.approx(R_star, abs=1e-7)
