"""The parts of MRCCCG that make it scale in the number of classes (issue 28): the box grows
only after steps that paid, wide LPs are re-solved by the interior point method, and the
certificate's dual point starts from the generation's last one. Every certificate is checked
against the full LP, built from the definition."""

from types import SimpleNamespace

import numpy as np
import pytest
from test_mrc import EXACT, _assert_certified, _data, _full_lp_R

from exactclf.mrc import MRCCCG, _ccg, mrc_full_lp, mrc_statistics
from exactclf.mrc._bounds import DualPoint, dual_point
from exactclf.mrc._box import _UNPAID_STEPS, Box
from exactclf.mrc._lp import HighsLP


def _solve(box, at_bound: bool, objective: float):
    """A solve whose two columns sit at the box's bounds (with negative reduced costs) or
    inside it (with zero reduced costs, as at any LP optimum)."""
    cols, ub = box.bounds(np.array([0]))
    x = np.r_[0.0, ub if at_bound else 0.5 * ub]
    return SimpleNamespace(x=x, col_dual=np.full(3, -1.0 if at_bound else 0.0),
                           objective=objective)


def _step(box, R_iterate, objective, at_bound=True):
    box.apply(SimpleNamespace(set_col_bounds=lambda *args: None), np.array([0]))
    res = _solve(box, at_bound, objective)
    best = min((box.center_R, box.center), (R_iterate, np.zeros(1)), key=lambda b: b[0])
    box.update(res, R_iterate, (best[0], best[1], 0.0), tol=1e-9)


def test_box_grows_only_after_a_step_that_paid():
    box = Box(np.ones(1))
    _step(box, 0.9, 0.0)  # the first iterate: no center to compare with
    r = box.radius
    _step(box, 1.2, 0.5)  # binds, R rose: the model promised 0.4, nothing was paid
    assert box.binds and box.radius == r and box.center_R == 0.9
    _step(box, 0.6, 0.5)  # paid 0.3 of the 0.4 promised: grows
    assert box.radius == 2 * r and box.center_R == 0.6
    _step(box, 0.59, 0.2)  # paid 0.01 of 0.4: stays
    assert box.radius == 2 * r
    _step(box, 0.55, 0.5, at_bound=False)  # paid, but the box does not bind: stays
    assert not box.binds and box.radius == 2 * r


def test_box_binds_by_what_its_next_radius_gains():
    """An interior point method's iterate sits a little inside a bound that binds; and a
    column whose reduced cost per unit is below tol binds where the radius it would add
    gains more than tol (a feature constant over the training pairs, whose optimum lies at
    |mu_j| of 1 / psi_j)."""
    box = Box(np.ones(1))
    box.apply(SimpleNamespace(set_col_bounds=lambda *args: None), np.array([0]))
    cols, ub = box.bounds(np.array([0]))
    inside = SimpleNamespace(x=np.r_[0.0, ub * (1.0 - 1e-6)], col_dual=np.r_[0.0, -1e-3, 0.0],
                             objective=0.0)
    box.update(inside, 0.5, (0.5, np.zeros(1), 0.0), tol=1e-6)
    assert box.binds
    for radius, binds in ((1.0, False), (1e3, True)):
        box.radius = radius
        box.apply(SimpleNamespace(set_col_bounds=lambda *args: None), np.array([0]))
        cols, ub = box.bounds(np.array([0]))
        small = SimpleNamespace(x=np.r_[0.0, ub], col_dual=np.r_[0.0, -1e-8, 0.0],
                                objective=0.0)
        box.update(small, 0.5, (0.5, np.zeros(1), 0.0), tol=1e-6)
        assert box.binds == binds


def test_box_grows_after_unpaid_steps_in_a_row():
    box = Box(np.ones(1))
    _step(box, 0.5, 0.0)
    r = box.radius
    for k in range(1, 2 * _UNPAID_STEPS + 1):  # grows after every _UNPAID_STEPS of them
        _step(box, 0.7, 0.1)
        assert box.radius == r * 2 ** (k // _UNPAID_STEPS)


def test_highs_interior_point_gives_a_basis_like_the_simplex():
    lp = HighsLP(tol=1e-9)
    lp.add_cols(np.array([-1.0, -1.0]), np.zeros(2), np.full(2, np.inf))
    lp.add_rows(np.full(3, -np.inf), np.array([4.0, 6.0, 10.0]), np.array([0, 2, 4]),
                np.array([0, 1, 0, 1, 0, 1]), np.array([1.0, 2.0, 3.0, 1.0, 1.0, 1.0]))
    ipm = lp.solve("ipm")
    dual = lp.solve("dual")
    assert ipm.optimal and ipm.objective == pytest.approx(-2.8, abs=1e-8)
    np.testing.assert_allclose(ipm.x, dual.x, atol=1e-8)
    np.testing.assert_allclose(ipm.row_dual, dual.row_dual, atol=1e-8)
    assert ipm.row_basic.tolist() == [False, False, True]  # the slack row 3 is inactive


@pytest.mark.parametrize("K", [3, 6])
def test_interior_point_solves_reach_the_full_lp(monkeypatch, K):
    """Every solve after new rows by the interior point method (crossover gives the basis
    that row deletion and the box read): the same R*, certified."""
    calls = []
    solve = HighsLP.solve

    def spy(self, method=None, time_limit=None):
        calls.append(method)
        return solve(self, method, time_limit)

    monkeypatch.setattr(_ccg, "_IPM_COLUMNS", 0)
    monkeypatch.setattr(_ccg, "_DENSE_IPM_ENTRIES", 0)  # (HiGHS', not exactclf.mrc._ipm)
    monkeypatch.setattr(HighsLP, "solve", spy)
    X, y = _data(150, K, seed=K)
    clf = MRCCCG(n_max=20, **EXACT).fit(X, y)
    assert "ipm" in calls
    R_star = _assert_certified(clf, X, y, atol=1e-8)
    assert clf.converged_ and clf.upper_ == pytest.approx(R_star, abs=1e-7)
    assert clf.upper_ - clf.lower_ <= 1e-7


def _problem(K, n=120, seed=0):
    X, y = _data(n, K, seed=seed)
    Psi = np.c_[np.ones(n), X]
    tau, lam = mrc_statistics(Psi, y, K, 0.3)
    R_star = mrc_full_lp(Psi, y, K, tau, lam, tol=1e-10).objective
    return Psi, y, tau, lam, R_star


def _seed_from(Psi, y, K, tau, lam):
    """The certificate's own dual point of the full problem, as a seed."""
    point = dual_point(Psi, y, K, tau, lam, np.zeros((len(y), K)), tol=1e-10)
    Q = point.Q
    return point, (point.sample, Q, 1.0 - 1.0 / (Q > 0).sum(axis=1), point.alpha,
                   point.class_alpha)


@pytest.mark.parametrize("K", [2, 4])
def test_dual_point_returns_a_seed_that_proves_enough(K):
    Psi, y, tau, lam, R_star = _problem(K)
    point, seed = _seed_from(Psi, y, K, tau, lam)
    assert point.bound == pytest.approx(R_star, abs=1e-8)
    # scores of a poor mu: from these rows alone the LP would need rounds
    again = dual_point(Psi, y, K, tau, lam, np.ones((len(y), K)), tol=1e-6, seed=seed,
                       upper=R_star)
    assert isinstance(again, DualPoint) and again.bound == point.bound
    np.testing.assert_array_equal(again.sample, point.sample)


@pytest.mark.parametrize("K", [3, 5])
def test_dual_point_from_a_weak_seed_reaches_r_star(K):
    """A seed that proves little (one row of weight 1, no class rows) is only a start: the
    column generation still reaches the full LP's R*, and never reports more."""
    Psi, y, tau, lam, R_star = _problem(K, seed=K)
    mask = np.zeros((1, K), dtype=bool)
    mask[0, :2] = True
    seed = (np.array([0]), mask / 2.0, np.array([0.5]), np.ones(1), np.zeros(K))
    point = dual_point(Psi, y, K, tau, lam, np.zeros((len(y), K)), tol=1e-10, seed=seed,
                       upper=R_star)
    assert point.bound <= R_star + 1e-9
    assert point.bound == pytest.approx(R_star, abs=1e-7)


def test_generation_dual_rows_are_a_dual_point_of_the_program():
    """``dual_rows`` of the generation: the rows it names are the most violated subsets of
    their samples at some iterate, their weights sum to 1, and priced over every feature
    they prove the generation's bound (the certificate then needs no LP)."""
    K = 4
    X, y = _data(200, K, seed=3)
    clf = MRCCCG(n_max=15, **EXACT).fit(X, y)
    Psi = np.c_[np.ones(len(X)), X]
    Psi_s = Psi / np.abs(Psi).max(axis=0)
    tau, lam = mrc_statistics(Psi_s, y, K, clf.s)
    res = _ccg.mrc_ccg(Psi_s, y, K, tau, lam, n_max=15, eps1=1e-9, tol=1e-9)
    sample, Q, values, alpha, class_alpha = res.dual_rows
    assert alpha.sum() + class_alpha.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(values, 1.0 - 1.0 / (Q > 0).sum(axis=1))
    point = dual_point(Psi_s, y, K, tau, lam, np.zeros((len(y), K)), tol=1e-9,
                       seed=res.dual_rows, upper=res.upper)
    assert point.bound == pytest.approx(res.lower, abs=1e-10)
    assert point.bound <= _full_lp_R(clf, X, y) + 1e-9
    assert res.upper - point.bound <= 1e-8


def test_many_classes_certificate_against_the_full_lp():
    """Eight classes, few rows per iteration (so the box meets unpaid steps): certified."""
    X, y = _data(60, 8, d=3, seed=8)
    clf = MRCCCG(n_max=10, **EXACT).fit(X, y)
    R_star = _assert_certified(clf, X, y, atol=1e-8)
    assert clf.converged_ and abs(clf.upper_ - R_star) < 1e-7
    assert clf.upper_ - clf.lower_ <= 1e-7


@pytest.mark.parametrize("K", [3, 7, 12])
def test_rows_reach_highs_without_zeros(K):
    """A row of sample i and subset C touches only the |C| class blocks of mu: the CSR
    triplets handed to the LP hold ``1 + 2 |C| d`` entries (nu, mu1, mu2), none zero, the
    same from a dense and a sparse ``Psi``, and they are the definition's row."""
    import scipy.sparse as sp

    from exactclf.mrc._rows import lp_rows

    rng = np.random.default_rng(K)
    d, r = 5, 9
    U = rng.standard_normal((r, d))
    masks = rng.random((r, K)) < 0.4
    masks[np.arange(r), rng.integers(0, K, r)] = True
    active = np.arange(K * d)
    upper, starts, idx, val = lp_rows(U, masks, active, d)
    sizes = masks.sum(axis=1)
    np.testing.assert_array_equal(np.diff(np.r_[starts, len(idx)]), 1 + 2 * sizes * d)
    assert np.all(val != 0.0)
    np.testing.assert_allclose(upper, 1.0 / sizes - 1.0)
    again = lp_rows(sp.csr_matrix(U), masks, active, d)
    for a, b in zip((upper, starts, idx, val), again, strict=True):
        np.testing.assert_array_equal(a, b)
    A = sp.csr_matrix((val, idx, np.r_[starts, len(idx)]), shape=(r, 1 + 2 * K * d)).toarray()
    F = np.zeros((r, K * d))
    for i in range(r):
        for c in np.flatnonzero(masks[i]):
            F[i, c * d:(c + 1) * d] = U[i] / sizes[i]
    np.testing.assert_allclose(A[:, 0], -1.0)
    np.testing.assert_allclose(A[:, 1::2], F)
    np.testing.assert_allclose(A[:, 2::2], -F)
