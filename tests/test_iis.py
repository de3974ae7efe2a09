"""The minimum-IIS-cover solver against independent oracles and the enumeration."""

from itertools import combinations

import numpy as np
import pytest
from _helpers import brute_force_min01, hide_module, random_instance, strictly_separable

from exactclf._certificate import StopReason
from exactclf._zero_one import _iis
from exactclf._zero_one._cover import BOUND_RTOL, CoverModel
from exactclf._zero_one._iis import (
    IISCoverSolver,
    IISOracle,
    exact_gordan_support,
    farkas_multipliers,
    near_gordan_support,
    solve_iis_cover,
)
from exactclf._zero_one._min01 import labeling_errors, solve_min01

KINDS = ["gaussian", "grid", "collinear", "flat"]
#: the cover master's solvers; gurobipy is a test dependency (its pip licence takes these)
SOLVERS = ["highs", "gurobi"]


def _check(Z, wpos, wneg, res, expected):
    assert res.complete and res.stop_reason is None
    assert res.value == pytest.approx(expected, rel=1e-12, abs=1e-12)
    # the labeling is realizable and realizes the value; the bound is proven and tight
    assert labeling_errors(res.positive, wpos, wneg) == res.value
    assert strictly_separable(Z, res.positive)
    assert res.lower_bound <= expected + 1e-12
    assert res.lower_bound >= expected - 2 * BOUND_RTOL * abs(expected)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(10))
def test_matches_brute_force(kind, seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 5))
    n = int(rng.integers(2, 10))
    Z, wpos, wneg = random_instance(rng, kind, n, d)
    _check(Z, wpos, wneg, solve_iis_cover(Z, wpos, wneg, random_state=seed),
           brute_force_min01(Z, wpos, wneg))


def _instance(rng_seed, kind, d, sizes):
    """A :func:`random_instance` of ``kind`` in ``d`` dimensions, its size drawn from
    ``range(*sizes)``, with real-valued weights when ``rng_seed`` is odd."""
    rng = np.random.default_rng(rng_seed)
    Z, wpos, wneg = random_instance(rng, kind, int(rng.integers(*sizes)), d)
    if rng_seed % 2:
        wpos = wpos * rng.uniform(0.2, 2.0, len(wpos))
    return Z, wpos, wneg


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(8))
def test_matches_enumeration(kind, seed):
    """Larger instances, D = 1..6, with real-valued weights on half of them."""
    Z, wpos, wneg = _instance(1000 + seed, kind, 1 + (seed + KINDS.index(kind)) % 6, (10, 28))
    _check(Z, wpos, wneg, solve_iis_cover(Z, wpos, wneg), solve_min01(Z, wpos, wneg).value)


@pytest.mark.parametrize("seed", range(4))
def test_noisy_halfspace_with_conflicting_duplicates(seed):
    """Many conflicting duplicates (both weights > 0, some tied) on a noisy halfspace."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(60, 3)).astype(float)
    y = X @ np.array([1.0, -1.0, 0.5]) + rng.normal(scale=1.0, size=60) > 0.5
    Z, inverse = np.unique(X, axis=0, return_inverse=True)
    wpos = np.bincount(inverse, weights=y, minlength=len(Z))
    wneg = np.bincount(inverse, weights=~y, minlength=len(Z))
    assert np.any((wpos > 0) & (wneg > 0))
    _check(Z, wpos, wneg, solve_iis_cover(Z, wpos, wneg), solve_min01(Z, wpos, wneg).value)


@pytest.mark.parametrize("transform", ["offset", "tiny"])
def test_units_do_not_change_the_optimum(transform):
    rng = np.random.default_rng(5)
    Z, wpos, wneg = random_instance(rng, "grid", 25, 3)
    expected = solve_iis_cover(Z, wpos, wneg).value
    Zt = Z + 1e10 if transform == "offset" else Z * 1e-200
    res = solve_iis_cover(Zt, wpos, wneg)
    assert res.complete and res.value == expected
    assert labeling_errors(res.positive, wpos, wneg) == expected


def test_trivial_instances():
    Z = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    # only ties and conflicting points: every labeling costs the minority weights
    res = solve_iis_cover(Z, np.array([1.0, 2.0, 0.5]), np.array([1.0, 2.0, 0.5]))
    assert res.complete and res.value == res.lower_bound == 3.5
    # one label only
    res = solve_iis_cover(Z, np.ones(3), np.zeros(3))
    assert res.complete and res.value == 0 and res.positive.all()
    # a single point
    res = solve_iis_cover(Z[:1], np.array([1.0]), np.array([3.0]))
    assert res.complete and res.value == 1.0 and not res.positive[0]


def test_incumbent_is_used_and_realized():
    rng = np.random.default_rng(3)
    Z, wpos, wneg = random_instance(rng, "gaussian", 30, 3)
    opt = solve_min01(Z, wpos, wneg)
    res = solve_iis_cover(Z, wpos, wneg, incumbent=opt.positive)
    assert res.complete and res.value == opt.value


def test_budget_stop_returns_realized_labeling_and_valid_bound():
    rng = np.random.default_rng(11)
    Z = rng.normal(size=(70, 4))
    y = Z[:, 0] + 0.8 * rng.normal(size=70) > 0
    wpos, wneg = y * 1.0, ~y * 1.0
    opt = solve_min01(Z, wpos, wneg).value
    for limit in (1e-4, 0.02):
        res = solve_iis_cover(Z, wpos, wneg, time_limit=limit)
        assert labeling_errors(res.positive, wpos, wneg) == res.value
        assert strictly_separable(Z, res.positive)
        assert res.lower_bound <= opt <= res.value
        assert res.complete == (res.value == res.lower_bound)
        if not res.complete:
            assert res.stop_reason == "time_limit"


def test_reproducible():
    rng = np.random.default_rng(8)
    Z, wpos, wneg = random_instance(rng, "gaussian", 40, 3)
    a = solve_iis_cover(Z, wpos, wneg, random_state=4)
    b = solve_iis_cover(Z, wpos, wneg, random_state=4)
    np.testing.assert_array_equal(a.positive, b.positive)
    assert (a.n_cuts, a.n_rounds) == (b.n_cuts, b.n_rounds)


def test_interrupt_returns_best_so_far(monkeypatch):
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(50, 3))
    y = Z[:, 0] + rng.normal(size=50) > 0
    wpos, wneg = y * 1.0, ~y * 1.0
    opt = solve_min01(Z, wpos, wneg).value
    calls = {"n": 0}
    real = IISOracle.find_iis

    def interrupted(self, keep, objective):
        calls["n"] += 1
        if calls["n"] > 15:
            raise KeyboardInterrupt
        return real(self, keep, objective)

    monkeypatch.setattr(IISOracle, "find_iis", interrupted)
    with pytest.warns(UserWarning, match="interrupted"):
        res = solve_iis_cover(Z, wpos, wneg)
    assert not res.complete and res.stop_reason == "interrupted"
    assert res.lower_bound <= opt <= res.value
    assert labeling_errors(res.positive, wpos, wneg) == res.value


def test_verbose_reports_best_bound_gap(capsys):
    rng = np.random.default_rng(0)
    Z, wpos, wneg = random_instance(rng, "gaussian", 20, 2)
    solve_iis_cover(Z, wpos, wneg, verbose=1)
    err = capsys.readouterr().err
    assert "best=" in err and "bound=" in err and "gap=" in err


def test_unverifiable_certificate_stops_without_claim(monkeypatch):
    """When floating point proposes a certificate that the exact check rejects, the solver
    stops with the realized incumbent and no optimality claim."""
    rng = np.random.default_rng(1)
    Z, wpos, wneg = random_instance(rng, "gaussian", 20, 2)
    opt = solve_min01(Z, wpos, wneg).value
    monkeypatch.setattr(_iis, "farkas_multipliers", lambda G: None)
    monkeypatch.setattr(_iis, "near_gordan_support", lambda G: None)
    with pytest.warns(Warning, match="floating point"):
        res = solve_iis_cover(Z, wpos, wneg)
    if res.value > res.lower_bound:
        assert not res.complete and res.stop_reason == "numerical"
    assert res.lower_bound <= opt <= res.value


# -- the building blocks ---------------------------------------------------------------------
def test_exact_gordan_support():
    # +, -, + on a line: the three points form an IIS
    G = np.array([[0.0, 1.0], [-1.0, -1.0], [2.0, 1.0]])
    assert exact_gordan_support(G).tolist() == [0, 1, 2]
    # +, +, - on a line: separable (the null combination has mixed signs)
    G = np.array([[0.0, 1.0], [1.0, 1.0], [-2.0, -1.0]])
    assert exact_gordan_support(G) is None
    # an exact zero coefficient: the IIS is the first two rows
    G = np.array([[1.0, 0.1], [-1.0, -0.1], [3.0, 7.0]])
    assert exact_gordan_support(G).tolist() == [0, 1]
    # independent rows: no null combination
    G = np.array([[1.0, 0.5, 0.0], [-1.0, -0.4, 0.0], [0.0, 0.0, 1.0]])
    assert exact_gordan_support(G) is None
    # a two-dimensional null space is not a certificate
    G = np.array([[1.0, 1.0], [-1.0, -1.0], [2.0, 2.0], [-2.0, -2.0]])
    assert exact_gordan_support(G) is None


def _fraction_null_space(G):
    """Basis of ``{v : sum_t v_t g_t = 0}`` by Gauss-Jordan on Fractions (the reference)."""
    from fractions import Fraction

    A = [[Fraction(float(x)) for x in col] for col in np.asarray(G).T]
    k = G.shape[0]
    pivots, r = [], 0
    for c in range(k):
        p = next((i for i in range(r, len(A)) if A[i][c] != 0), None)
        if p is None:
            continue
        A[r], A[p] = A[p], A[r]
        A[r] = [x / A[r][c] for x in A[r]]
        for i in range(len(A)):
            if i != r and A[i][c] != 0:
                f = A[i][c]
                A[i] = [a - f * b for a, b in zip(A[i], A[r], strict=True)]
        pivots.append(c)
        r += 1
    basis = []
    for f in (c for c in range(k) if c not in pivots):
        v = [Fraction(0)] * k
        v[f] = Fraction(1)
        for row, c in enumerate(pivots):
            v[c] = -A[row][f]
        basis.append(v)
    return basis


@pytest.mark.parametrize("seed", range(40))
def test_farkas_multipliers_match_rational_reference(seed):
    """Integer arithmetic against Gauss-Jordan on Fractions: random rows (integers, floats of
    mixed exponents, exact zeros, duplicated and dependent rows), each sign pattern."""
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 8))
    k = int(rng.integers(2, m + 3))
    kind = seed % 4
    if kind == 0:
        G = rng.integers(-3, 4, size=(k, m)).astype(float)
    elif kind == 1:
        G = rng.normal(size=(k, m)) * 10.0 ** rng.integers(-8, 9, size=(k, 1))
    elif kind == 2:  # a planted positive combination, exact: scaled by powers of two
        G = rng.integers(-9, 10, size=(k, m)) * 2.0 ** rng.integers(-30, 30, size=(k, 1))
        G[-1] = -(rng.integers(1, 5, size=k - 1) @ G[:-1])
    else:
        G = rng.integers(-2, 3, size=(k, m)) * 0.1
        G[rng.random(k) < 0.3] = 0.0
    basis = _fraction_null_space(G)
    u = farkas_multipliers(G)
    if len(basis) != 1 or len({(x > 0) - (x < 0) for x in basis[0]} - {0}) != 1:
        assert u is None
        return
    assert u is not None and min(u) >= 0 and np.gcd.reduce(u) == 1
    # the same ray as the reference
    v = basis[0]
    t = next(i for i, x in enumerate(v) if x != 0)
    assert all(Fraction(ui) * abs(v[t]) == abs(x) * u[t] for ui, x in zip(u, v, strict=True))
    assert all(sum(Fraction(ui) * Fraction(float(g)) for ui, g in zip(u, col, strict=True))
               == 0 for col in G.T)


def test_decimal_collinearity_within_tolerance():
    """0.1, 0.2, 0.3 are collinear only up to rounding: the exact check refuses the IIS,
    the tolerance check (the enumeration's coplanarity tolerance) accepts it."""
    P = np.array([[0.1, 0.7], [0.2, 0.5], [0.3, 0.3]])
    G = np.hstack([P, np.ones((3, 1))]) * np.array([1.0, -1.0, 1.0])[:, None]
    assert exact_gordan_support(G) is None
    assert near_gordan_support(G).tolist() == [0, 1, 2]
    G[1] *= -1
    assert near_gordan_support(G) is None


@pytest.mark.parametrize("solver", SOLVERS)
def test_cover_model_cutoff(solver):
    cm = CoverModel(np.array([1.0, 1.0, 1.0, 2.0]), solver=solver)
    cm.add_cuts([np.array([0, 1]), np.array([1, 2]), np.array([2, 3]), np.array([1, 0])])
    assert len(cm.cuts) == 3  # the duplicate is skipped
    x, bound, optimal = cm.solve()
    assert optimal and bound == 2.0 and cm.cost @ x == 2.0
    x, bound, optimal = cm.solve(integer=False)
    assert bound == 2.0 and cm.cost @ x == 2.0  # a path: the LP is integral
    fresh = CoverModel(cm.cost, solver=solver)
    fresh.add_cuts(cm.cuts)
    x, bound, optimal = fresh.solve(cutoff=1.5)  # no cover of cost <= 1.5
    assert x is None and bound == 2.0 and not optimal


@pytest.mark.parametrize("solver", SOLVERS)
def test_cover_model_floor_keeps_the_optimum(solver):
    cm = CoverModel(np.array([1.0, 1.0, 1.0, 2.0]), solver=solver)
    cm.add_cuts([np.array([0, 1]), np.array([2, 3])])
    cm.set_floor(2.0)  # the true optimum: nothing changes
    x, bound, optimal = cm.solve()
    assert optimal and bound == 2.0 and cm.cost @ x == 2.0
    cm.set_floor(1.0)  # lowering it is allowed (a weaker proven bound)
    cm.add_cuts([np.array([1, 3])])
    x, bound, optimal = cm.solve()
    assert optimal and bound == 2.0 and cm.cost @ x == 2.0 and len(cm.cuts) == 3


@pytest.mark.parametrize("seed", range(6))
def test_resumed_solver_matches_one_run(seed):
    """Runs on doubling slices (as in the portfolio) keep their cuts, incumbent and bound,
    and end at the optimum; an incumbent and a bound offered between runs are taken."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(50, 3))
    y = Z[:, 0] + 0.6 * rng.normal(size=50) > 0
    wpos, wneg = y * rng.uniform(1, 2, 50), ~y * 1.0
    opt = solve_min01(Z, wpos, wneg)
    solver = IISCoverSolver(Z, wpos, wneg, random_state=seed)
    bounds, values = [], []
    for k in range(20):
        res = solver.run(time_limit=0.002 * 2**k)
        bounds.append(res.lower_bound)
        values.append(res.value)
        assert res.lower_bound <= opt.value + 1e-9 and res.value >= opt.value - 1e-9
        assert labeling_errors(res.positive, wpos, wneg) == res.value
        if res.complete:
            break
    assert res.complete and res.value == pytest.approx(opt.value, rel=1e-12)
    assert bounds == sorted(bounds) and values == sorted(values, reverse=True)
    again = IISCoverSolver(Z, wpos, wneg, random_state=seed)
    again.raise_bound(0.5 * opt.value)
    again.offer(opt.positive)
    assert again.best == pytest.approx(opt.value, rel=1e-12)
    assert again.run().value == pytest.approx(opt.value, rel=1e-12)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(12))
def test_cover_model_first_cover_below_the_cutoff_and_bounds_stay_valid(seed, solver):
    """``first=True`` stops at any cover of cost at most the cutoff (never above it: HiGHS's
    first solutions may exceed its objective bound), and proves ``cutoff`` when there is
    none; the LP relaxation's bound stays valid with the ceiling row in the model."""
    import itertools

    from scipy.optimize import linprog

    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 10))
    cost = rng.integers(1, 5, size=n).astype(float) * (1.0 if seed % 2 else 0.37)
    sets = [rng.choice(n, size=int(rng.integers(2, 4)), replace=False) for _ in range(8)]
    best = min(float(cost[list(s)].sum()) for r in range(n + 1)
               for s in itertools.combinations(range(n), r)
               if all(set(t) & set(s) for t in sets))
    cm = CoverModel(cost, solver=solver)
    cm.add_cuts(sets)
    for cutoff in (best + 1.0, best, best - 0.3):
        x, bound, _ = cm.solve(integer=True, cutoff=cutoff, first=True)
        assert bound <= best + 1e-9
        if cutoff >= best:
            assert x is not None and cost @ x <= cutoff + 1e-9
            assert all(x[t].sum() >= 1 - 1e-9 for t in sets)
        else:
            assert x is None and bound == pytest.approx(cm.round_bound(cutoff), abs=1e-9)
    A = np.zeros((len(sets), n))
    for r, t in enumerate(sets):
        A[r, t] = 1.0
    lp = linprog(cost, A_ub=-A, b_ub=-np.ones(len(sets)), bounds=(0, 1)).fun
    _, bound, _ = cm.solve(integer=False)
    assert lp - 1e-5 * max(1.0, lp) <= bound <= best + 1e-9
    x, bound, optimal = cm.solve(integer=True)
    assert optimal and cost @ x == pytest.approx(best)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(12))
def test_cover_model_subset_bounds(seed, solver):
    """Rows ``sum_{i in S} c_i x_i >= v`` with ``v`` the least cost on ``S`` of any cover
    (brute force) keep the optimum, raise the LP relaxation's bound to the LP's optimum
    with those rows (coefficients ``min(c_i, v)``) and never past the optimum; a row with a
    larger ``v`` raises the MIP's bound; the integer and non-integer costs alike."""
    import itertools

    from scipy.optimize import linprog

    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 10))
    cost = rng.integers(1, 5, size=n).astype(float) * (1.0 if seed % 2 else 0.37)
    sets = [rng.choice(n, size=int(rng.integers(2, 4)), replace=False) for _ in range(6)]
    covers = [np.isin(np.arange(n), s) for r in range(n + 1)
              for s in itertools.combinations(range(n), r)
              if all(set(t) & set(s) for t in sets)]
    best = min(float(cost @ x) for x in covers)
    subsets = [rng.choice(n, size=int(rng.integers(2, n)), replace=False) for _ in range(4)]
    values = [min(float(cost[S] @ x[S]) for x in covers) for S in subsets]
    cm = CoverModel(cost, solver=solver)
    cm.add_cuts(sets)
    _, plain, _ = cm.solve(integer=False)
    assert cm.add_subset_bounds(subsets, values) == sum(v > 0 for v in values)
    A = np.zeros((len(sets) + len(subsets), n))
    for r, t in enumerate(sets):
        A[r, t] = 1.0
    for r, (S, v) in enumerate(zip(subsets, values, strict=True)):
        A[len(sets) + r, S] = np.minimum(cost[S], v)
    lp = linprog(cost, A_ub=-A, b_ub=-np.r_[np.ones(len(sets)), values], bounds=(0, 1)).fun
    _, bound, _ = cm.solve(integer=False)
    assert plain - 1e-9 * plain <= bound <= best + 1e-9
    assert bound == pytest.approx(cm.round_bound(lp), rel=1e-9)  # its slack, or rounded up
    x, bound, optimal = cm.solve(integer=True)
    assert optimal and bound <= best + 1e-9 and cost @ x == pytest.approx(best)
    # a floor above the optimum on all the points: the least cover that meets it
    cm.add_subset_bounds([np.arange(n)], [best + cost.min()])
    x, bound, optimal = cm.solve(integer=True)
    assert optimal and bound > best and cost @ x == pytest.approx(
        min(float(cost @ x) for x in covers if cost @ x >= best + cost.min() - 1e-9))


def test_undecided_warm_lp_is_solved_again_cold():
    """HiGHS can stop a warm-started Gordan LP at "Unknown" on a decidable subset; the oracle
    re-solves it cold instead of ending the cover as "numerical" (70 Gaussian points in
    12-D: 3 errors, bound 2, "numerical" in 0.4 s before; proven with the cold re-solve)."""
    import highspy

    from exactclf import ICEClassifier

    r = np.random.default_rng(3)
    X = r.normal(size=(70, 12))
    y = (X @ r.normal(size=12) > 0).astype(int)
    flip = r.random(70) < 0.1
    y[flip] = 1 - y[flip]
    clf = ICEClassifier(device="cpu", time_limit=30).fit(X, y)
    assert clf.is_optimal_ and clf.stop_reason_ is None
    # the same path forced: the oracle's first LP ends "Unknown"
    calls = {"forced": 0}
    oracle = _iis.IISOracle(X, np.where(y == 1, 1.0, -1.0))
    status = oracle._h.getModelStatus

    class Undecided:
        def __init__(self, h):
            self._h, self.first = h, True

        def __getattr__(self, name):
            return getattr(self._h, name)

        def getModelStatus(self):
            if self.first:
                self.first = False
                calls["forced"] += 1
                return highspy.HighsModelStatus.kUnknown
            return status()

    oracle._h = Undecided(oracle._h)
    keep = np.ones(70, dtype=bool)
    cut = oracle.find_iis(keep, np.ones(70))
    assert calls["forced"] == 1
    assert cut is not None and strictly_separable(X[cut[1:]], y[cut[1:]] == 1)
    assert not strictly_separable(X[cut], y[cut] == 1)


@pytest.mark.parametrize("seed", range(6))
def test_an_undecidable_subset_keeps_the_iiss_verified_before_it(monkeypatch, seed):
    """When floating point cannot decide a subset (forced here after a few IISs), the cover
    stops "numerical" but keeps the IISs its pass had verified: a bound above the conflicts,
    never above the optimum (before, the pass's IISs were dropped and the bound fell to 0)."""
    rng = np.random.default_rng(seed)
    Z, wpos, wneg = random_instance(rng, KINDS[seed % 4], 12, 2)
    flip = rng.random(len(Z)) < 0.4
    wpos, wneg = np.where(flip, wneg, wpos), np.where(flip, wpos, wneg)
    wneg = np.where(wpos == wneg, wneg + 1, wneg)  # no point without a cost in the cover
    best = brute_force_min01(Z, wpos, wneg)
    find = IISOracle.find_iis
    calls = {"n": 0}

    def undecidable_after_four(self, keep, objective):
        calls["n"] += 1
        if calls["n"] > 4:
            raise FloatingPointError("forced")
        return find(self, keep, objective)

    monkeypatch.setattr(IISOracle, "find_iis", undecidable_after_four)
    res = solve_iis_cover(Z, wpos, wneg, random_state=seed)
    if res.complete:  # fewer than five oracle calls settled it
        assert res.value == pytest.approx(best)
        return
    assert res.stop_reason == StopReason.NUMERICAL
    assert res.n_cuts >= 1
    assert np.minimum(wpos, wneg).sum() < res.lower_bound <= best + 1e-12


def test_a_numerical_stop_of_the_cover_hands_the_time_left_to_the_milp(monkeypatch):
    """The IIS cover stopped "numerical" early had left the fit with the cover's first
    labeling (9 errors where the optimum is 4 on a grid instance): the big-M MILP now runs
    in the time left, all of it (it had at most 30 s: fits of 300 s on diabetic returned
    after 252-268 s), and the fit keeps the better labeling with a certificate that
    verifies."""
    from exactclf import ICEClassifier, verify
    from exactclf._zero_one import _portfolio

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(60, 9)).astype(float)
    y = ((X - X.mean(0)) @ rng.normal(size=9) > 0).astype(int)
    y[rng.choice(60, 6, replace=False)] ^= 1
    find = IISOracle.find_iis
    calls = {"oracle": 0, "milp": []}

    def undecidable_after_ten(self, keep, objective):
        calls["oracle"] += 1
        if calls["oracle"] > 10:
            raise FloatingPointError("forced")
        return find(self, keep, objective)

    incumbent = _portfolio.best_incumbent

    def spy(*args, **kwargs):
        out = incumbent(*args, **kwargs)
        if not kwargs.get("surrogate", True):
            calls["milp"].append((out[1], kwargs["milp_time_limit"]))
        return out

    monkeypatch.setattr(IISOracle, "find_iis", undecidable_after_ten)
    monkeypatch.setattr(_portfolio, "best_incumbent", spy)
    with pytest.warns(Warning):
        clf = ICEClassifier(device="cpu", time_limit=100).fit(X, y)
    assert clf.stop_reason_ == "numerical" and not clf.is_optimal_
    [(errors, seconds)] = calls["milp"]
    assert clf.training_errors_ <= errors
    # the cover stopped within seconds: the MILP was given the rest of the 100
    assert _portfolio.MILP_INCUMBENT_SECONDS < seconds <= 100
    assert verify(clf, X, y).ok


@pytest.mark.parametrize("failures", [1, 3])
def test_an_undecided_lp_is_solved_again_with_perturbed_costs(monkeypatch, failures):
    """A subset whose LP floating point leaves undecided (forced here for the first
    ``failures`` solves) is tried again with perturbed costs, zeros kept zero, before it is
    called undecidable: the IIS then found is one, checked exactly here."""
    rng = np.random.default_rng(failures)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=40) > 0, 1, -1)
    oracle = IISOracle(X, y.astype(float))
    once = IISOracle._find_once
    seen = []

    def flaky(self, keep, objective):
        seen.append(objective.copy())
        if len(seen) <= failures:
            raise FloatingPointError("forced")
        return once(self, keep, objective)

    monkeypatch.setattr(IISOracle, "_find_once", flaky)
    objective = np.ones(40)
    objective[0] = 0.0
    cut = oracle.find_iis(np.ones(40, dtype=bool), objective)
    assert len(seen) == failures + 1 <= _iis._OBJECTIVE_TRIES
    assert all(o[0] == 0.0 for o in seen) and len({o.tobytes() for o in seen}) == len(seen)
    assert cut is not None and not strictly_separable(X[cut], y[cut] == 1)
    assert all(strictly_separable(np.delete(X[cut], k, 0), np.delete(y[cut], k) == 1)
               for k in range(len(cut)))


def test_a_subset_undecided_on_every_try_raises(monkeypatch):
    """Undecided on all its tries, the subset is reported undecidable (the cover then stops
    "numerical"), never taken as separable or as an IIS."""
    calls = []

    def never(self, keep, objective):
        calls.append(1)
        raise FloatingPointError("forced")

    monkeypatch.setattr(IISOracle, "_find_once", never)
    oracle = IISOracle(np.eye(3), np.array([1.0, -1.0, 1.0]))
    with pytest.raises(FloatingPointError):
        oracle.find_iis(np.ones(3, dtype=bool), np.ones(3))
    assert len(calls) == _iis._OBJECTIVE_TRIES


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(6))
def test_a_time_limited_relaxation_still_bounds_the_cover(seed, solver):
    """The master's LP relaxation stopped by its time limit reads its bound from the dual
    point it has (any one bounds the relaxation): never above the cover's optimum, whether
    HiGHS finished or not."""
    rng = np.random.default_rng(seed)
    n = 300
    cost = rng.integers(1, 4, n).astype(float) * (1e-7 if seed % 2 else 1.0)
    sets = [rng.choice(n, 6, replace=False) for _ in range(1000)]
    exact = CoverModel(cost, solver=solver)
    exact.add_cuts(sets)
    _, lp, _ = exact.solve(integer=False)  # at most the cover's optimum
    for limit in (1e-3, 1e-2, 1e-1):
        cm = CoverModel(cost, solver=solver)
        cm.add_cuts(sets)
        _, bound, _ = cm.solve(integer=False, time_limit=limit)
        assert 0.0 <= bound <= lp * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_the_reserve_bounds_the_iiss_no_master_saw(seed):
    """A run's last seconds (``reserve``) go to the LP relaxation over the IISs found since
    the master's last solve: the bound then is that relaxation's, at most the optimum;
    without a reserve the same IISs leave the bound where it was."""
    rng = np.random.default_rng(seed)
    Z, wpos, wneg = random_instance(rng, KINDS[seed % 4], 11, 2)
    flip = rng.random(len(Z)) < 0.4
    wpos, wneg = np.where(flip, wneg, wpos), np.where(flip, wpos, wneg)
    best = brute_force_min01(Z, wpos, wneg)
    full = IISCoverSolver(Z, wpos, wneg, random_state=seed)
    full.run()
    cuts = full.cut_sets()
    base = np.minimum(wpos, wneg).sum()
    relaxation = CoverModel(np.abs(wpos - wneg)[np.abs(wpos - wneg) > 0])
    position = np.cumsum(np.abs(wpos - wneg) > 0) - 1
    relaxation.add_cuts([position[t] for t in cuts])
    _, lp, _ = relaxation.solve(integer=False)
    bounds = {}
    for reserve in (0.0, 5.0):
        solver = IISCoverSolver(Z, wpos, wneg, random_state=seed)
        solver.add_cuts(cuts)
        # the reserve is the whole run: no round, only the relaxation
        res = solver.run(time_limit=reserve or 1e-9, reserve=reserve)
        bounds[reserve] = res.lower_bound
        assert res.lower_bound <= best + 1e-12
    assert bounds[0.0] == base
    assert bounds[5.0] == pytest.approx(min(base + lp, best), rel=1e-9, abs=1e-9)


def test_cuts_from_elsewhere_must_hold_on_the_samples():
    """Given the samples, an IIS found in other coordinates is taken only with exact
    multipliers on them (the certificate's witness needs them); the caller learns whether
    all were taken."""
    Z = np.array([[0.0], [1.0], [2.0]])
    wpos, wneg = np.array([1.0, 0, 1]), np.array([0.0, 1, 0])
    cut = [np.array([0, 1, 2])]
    same = IISCoverSolver(Z, wpos, wneg, samples=Z)
    assert same.add_cuts(cut) and len(same.cut_sets()) == 1
    assert same.farkas() == {(0, 1, 2): [1, 2, 1]}
    # on these samples the middle point moved past the last: the three are separable
    other = IISCoverSolver(Z, wpos, wneg, samples=np.array([[0.0], [3.0], [2.0]]))
    assert not other.add_cuts(cut) and other.cut_sets() == []
    assert IISCoverSolver(Z, wpos, wneg).add_cuts(cut)  # no samples: taken as verified


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(4))
def test_gurobi_master_proves_the_same_optimum(kind, seed):
    """The master on Gurobi: the enumeration's optimum, proven, in D = 3..8 with real-valued
    weights on half of the instances; a fallback to HiGHS fails the test."""
    import warnings

    from exactclf._gurobi import SolverFallbackWarning

    Z, wpos, wneg = _instance(2000 + seed, kind, 3 + (seed + KINDS.index(kind)) % 6, (12, 26))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SolverFallbackWarning)
        solver = IISCoverSolver(Z, wpos, wneg, mip_solver="gurobi")
        res = solver.run()
    assert solver.master.solver == "gurobi"
    _check(Z, wpos, wneg, res, solve_min01(Z, wpos, wneg).value)


def test_gurobi_refusal_replays_the_cover_on_highs(monkeypatch):
    """A licence refusal moves the cover rows, the floor and the ceiling to HiGHS; the
    answers are then those of a HiGHS model of the same rows."""
    from exactclf._gurobi import GurobiLicenceError, SolverFallbackWarning
    from exactclf._zero_one import _cover

    rng = np.random.default_rng(3)
    n = 12
    cost = rng.integers(1, 4, n).astype(float)
    sets = [rng.choice(n, 3, replace=False) for _ in range(15)]
    ref = CoverModel(cost)
    ref.add_cuts(sets)
    _, best, _ = ref.solve()
    cm = CoverModel(cost, solver="gurobi")
    cm.add_cuts(sets[:8])
    cm.set_floor(1.0)
    x, _, _ = cm.solve(cutoff=best + 0.5, first=True)  # adds the ceiling row
    assert x is not None and cm.solver == "gurobi"

    def refuse(self, *args):
        raise GurobiLicenceError("Model too large for size-limited license")

    monkeypatch.setattr(_cover._GurobiCover, "run", refuse)
    cm.add_cuts(sets[8:])
    with pytest.warns(SolverFallbackWarning, match="HiGHS"):
        x, bound, _ = cm.solve(cutoff=best - 0.5, first=True)
    assert cm.solver == "highs" and x is None and bound == best
    x, bound, _ = cm.solve(cutoff=best + 0.5, first=True)
    assert cost @ x <= best + 0.5 and all(x[t].sum() >= 1 for t in sets)
    x, bound, optimal = cm.solve()
    assert optimal and bound == best and cost @ x == best
    _, lp, _ = cm.solve(integer=False)
    _, lp_ref, _ = ref.solve(integer=False)
    assert lp == pytest.approx(max(lp_ref, 1.0), rel=1e-6)


def test_gurobi_master_missing_names_the_extra(monkeypatch):
    hide_module(monkeypatch, "gurobipy")
    with pytest.raises(ImportError, match=r"mip_solver='gurobi'.*pip install exactclf\[gurobi\]"):
        CoverModel(np.ones(3), solver="gurobi")


def test_auto_master_takes_gurobi_where_it_is_installed():
    """The default master of ICEClassifier: Gurobi here (the dev extra installs it), with the
    cover's optimum of HiGHS."""
    rng = np.random.default_rng(5)
    cost = rng.integers(1, 5, 10).astype(float)
    sets = [rng.choice(10, 3, replace=False) for _ in range(12)]
    answers = []
    for solver in ("auto", "highs"):
        cm = CoverModel(cost, solver=solver)
        cm.add_cuts(sets)
        answers.append((cm.solver, cm.solve()[1:]))
    assert answers[0][0] == "gurobi" and answers[1][0] == "highs"
    assert answers[0][1] == answers[1][1]


def test_auto_master_without_gurobi_is_highs(monkeypatch):
    hide_module(monkeypatch, "gurobipy")
    cm = CoverModel(np.ones(3), solver="auto")
    cm.add_cuts([np.array([0, 1]), np.array([2])])
    assert cm.solver == "highs" and cm.solve()[1] == 2.0


def test_auto_master_falls_back_quietly_on_a_licence_refusal(monkeypatch):
    """Refused at the start (no licence) or past the size-limited licence's 2000 rows: HiGHS
    goes on with the same rows, and no warning names a solver the user did not ask for."""
    import warnings

    from exactclf._gurobi import GurobiLicenceError
    from exactclf._zero_one import _cover

    def refuse(self, *args):
        raise GurobiLicenceError("Model too large for size-limited license")

    cost = np.array([1.0, 2.0, 1.0, 3.0])
    sets = [np.array([0, 1]), np.array([1, 2]), np.array([3])]
    cm = CoverModel(cost, solver="auto")
    assert cm.solver == "gurobi"
    monkeypatch.setattr(_cover._GurobiCover, "run", refuse)
    cm.add_cuts(sets)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, bound, optimal = cm.solve()
    assert cm.solver == "highs" and optimal and bound == 5.0
    monkeypatch.setattr(_cover._GurobiCover, "__init__", refuse)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert CoverModel(cost, solver="auto").solver == "highs"


def test_ctrl_c_in_a_gurobi_solve_reaches_the_fit():
    """Gurobi handles SIGINT itself (status INTERRUPTED); the shared optimize raises it as
    KeyboardInterrupt, which the IIS cover and MRCCCG turn into their best-so-far results."""
    import gurobipy as gp

    from exactclf._gurobi import optimize

    class Interrupted:
        Status = gp.GRB.INTERRUPTED

        def optimize(self):
            pass

    with pytest.raises(KeyboardInterrupt):
        optimize(gp, Interrupted())


def test_interrupted_gurobi_master_returns_the_best_so_far(monkeypatch):
    """Ctrl-C during the Gurobi master: the IIS cover stops with a realized labeling and a
    valid bound (as with HiGHS)."""
    from exactclf._zero_one import _cover

    rng = np.random.default_rng(11)
    Z = rng.normal(size=(60, 4))
    y = Z[:, 0] + 0.8 * rng.normal(size=60) > 0
    wpos, wneg = y * 1.0, ~y * 1.0
    opt = solve_min01(Z, wpos, wneg).value
    real = _cover._GurobiCover.run
    calls = []

    def interrupted_second(self, *args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, *args)

    monkeypatch.setattr(_cover._GurobiCover, "run", interrupted_second)
    with pytest.warns(UserWarning, match="interrupted"):
        res = IISCoverSolver(Z, wpos, wneg, mip_solver="gurobi").run()
    assert res.stop_reason == StopReason.INTERRUPTED and not res.complete
    assert labeling_errors(res.positive, wpos, wneg) == res.value >= opt
    assert res.lower_bound <= opt


def test_cuts_cover_bound_without_time_left_keeps_the_lp_relaxation_bound():
    # three pairwise IISs of unit-weight points: the LP relaxation's optimum is 1.5 (every
    # point at 1/2), an integer cover needs 2; with integer costs the LP bound rounds up to 2.
    # A fit at its time_limit (time_limit=0) keeps that bound instead of running the MIP.
    wpos, wneg = np.array([1.0, 1, 0, 3]), np.array([0.0, 0, 1, 0])
    cuts = [np.array([0, 1]), np.array([1, 2]), np.array([0, 2])]
    assert _iis.cuts_cover_bound(cuts, wpos, wneg, time_limit=0.0) == 2.0
    assert _iis.cuts_cover_bound(cuts, wpos, wneg) == 2.0
    # fractional weights: no rounding up; the relaxation's half-integral optimum, every
    # point at 1/2, costs (1.5 + 2.5 + 4) / 2 = 4 as the cheapest cover {0, 1} does
    w = np.array([1.5, 2.5, 4.0, 0.0])
    for seconds in (0.0, 5.0):
        got = _iis.cuts_cover_bound(cuts, w, np.zeros(4), time_limit=seconds)
        assert got <= 4.0 and got == pytest.approx(4.0, rel=4 * BOUND_RTOL)


def test_what_the_relaxation_leaves_of_the_reserve_goes_to_the_integer_master():
    """After the LP relaxation, the rest of a run's reserve goes to the integer master over
    all IISs: on alternating labels on a line, whose alternating triples (the IISs) have a
    fractional cover of weight 5/3 and no integer cover below 2, the run proves 2, not the
    relaxation's 5/3."""
    Z = np.arange(5.0)[:, None]
    positive = np.array([1, 0, 1, 0, 1], dtype=bool)
    # weights just off the integers: the relaxation's bound is not rounded up to 2
    weight = np.array([1.0, 1.1, 1.0, 1.1, 1.0])
    wpos, wneg = np.where(positive, weight, 0.0), np.where(positive, 0.0, weight)
    best = brute_force_min01(Z, wpos, wneg)
    assert best == pytest.approx(2.0)
    triples = [np.array(t) for t in combinations(range(5), 3)
               if positive[t[0]] == positive[t[2]] != positive[t[1]]]
    solves = []
    solver = IISCoverSolver(Z, wpos, wneg)
    assert solver.add_cuts(triples)
    solve = solver.master.solve

    def recorded(integer=True, **kw):
        out = solve(integer=integer, **kw)
        solves.append((integer, out[1]))
        return out

    solver.master.solve = recorded
    res = solver.run(time_limit=5.0, reserve=5.0)  # the reserve is the whole run
    assert [integer for integer, _ in solves] == [False, True]
    assert solves[0][1] < 1.9  # the relaxation alone: 5/3 at most
    assert best * (1 - 2 * BOUND_RTOL) <= res.lower_bound <= best


@pytest.mark.parametrize("seed", [14, 3])
@pytest.mark.parametrize("mip_solver", ["auto", "highs"])
def test_large_integer_weights_give_no_false_bound(seed, mip_solver):
    """Integer weights up to 1e12: the master sees them scaled (a solver took a cover 7 %
    above the optimum for optimal on them as they were); the bound never passes the
    enumeration's optimum, an optimality claim is exact, and the certificate verifies."""
    import warnings

    from _helpers import weighted_samples
    from sklearn.exceptions import ConvergenceWarning

    from exactclf import ICEClassifier, verify

    rng = np.random.default_rng(seed)
    n = int(rng.integers(18, 26))
    Z, wpos, wneg = random_instance(rng, "gaussian", n, 5)
    X, y, _ = weighted_samples(Z, wpos, wneg)
    w = rng.integers(1, 10**12, len(y)).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cover = ICEClassifier(method="iis_cover", device="cpu", mip_solver=mip_solver).fit(
            X, y, sample_weight=w)
    exact = ICEClassifier(method="exact", device="cpu").fit(X, y, sample_weight=w)
    assert exact.is_optimal_
    assert cover.lower_bound_ <= exact.training_errors_ <= cover.training_errors_
    if cover.is_optimal_:
        assert cover.training_errors_ == exact.training_errors_
    assert verify(cover, X, y, w).ok
