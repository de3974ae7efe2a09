"""The units of the sample weights change nothing but the units of what they measure.

Scaling every weight by ``c`` scales ``training_errors_``, ``lower_bound_`` and the
objectives by ``c``; the model, ``is_optimal_`` and the relative ``gap_`` stay. Tolerances
relative to 1 (``rtol * max(1, |x|)``) or absolute break this below weights of about 1:
with weights scaled by 1e-7, the IIS cover once certified a classifier with twice the
optimal errors (issue 24).
"""

import numpy as np
import pytest
from _helpers import brute_force_min01

from exactclf import ICEClassifier
from exactclf._zero_one._cover import BOUND_RTOL, CoverModel
from exactclf.maxout import DeepICEMaxoutClassifier
from exactclf.mrc import MRCCCG
from exactclf.threshold import ThresholdNetLasso

SCALES = [1e-12, 1e-7, 1.0, 1e7, 1e12]
#: the optimum of the issue's instance, by the enumeration (method="exact", 30 s)
ISSUE_OPTIMUM = 2.6911155353403995


def _issue_data():
    r = np.random.default_rng(1)
    n, d = 60, 6
    X = r.normal(size=(n, d))
    w = r.normal(size=d)
    y = (X @ w + 0.6 * np.std(X @ w) * r.normal(size=n) > 0).astype(int)
    return X, y, r.uniform(0.5, 1.5, n)


def _mixed_data(seed):
    """The issue's generator with weights from {0.001, 1, 1000}."""
    r = np.random.default_rng(seed)
    n, d = 60, 6
    X = r.normal(size=(n, d))
    w = r.normal(size=d)
    y = (X @ w + 0.6 * np.std(X @ w) * r.normal(size=n) > 0).astype(int)
    return X, y, r.choice([0.001, 1.0, 1000.0], n)


def _check_certificate(clf, optimum, c):
    """``clf`` (fitted with weights in units of ``c``) is optimal with a tight bound."""
    assert clf.training_errors_ / c == pytest.approx(optimum, rel=1e-9)
    assert clf.is_optimal_ and clf.gap_ == 0.0
    assert clf.lower_bound_ <= clf.training_errors_
    # the docstring's promise: the bound is within a relative 2e-6 of the errors
    assert clf.lower_bound_ >= clf.training_errors_ * (1 - 2 * BOUND_RTOL)


@pytest.mark.parametrize("method", ["iis_cover", "auto"])
@pytest.mark.parametrize("c", SCALES)
def test_issue_instance_in_any_units(method, c):
    X, y, sw = _issue_data()
    clf = ICEClassifier(method=method).fit(X, y, sample_weight=sw * c)
    _check_certificate(clf, ISSUE_OPTIMUM, c)


@pytest.mark.parametrize("mip_solver", ["highs", "gurobi"])
@pytest.mark.parametrize("c", [1e-7, 1.0, 1e6, 1e12])
def test_integer_weights_in_any_units(c, mip_solver):
    """Integer weights (times 1e6 or 1e12: still integers) keep the cover's rounding up;
    times 1e-7 they are certified within the relative tolerance."""
    X, y, _ = _issue_data()
    sw = np.random.default_rng(3).integers(1, 4, len(y)).astype(float)
    ref = ICEClassifier(method="exact").fit(X[:30, :3], y[:30], sample_weight=sw[:30])
    clf = ICEClassifier(method="iis_cover", mip_solver=mip_solver).fit(
        X[:30, :3], y[:30], sample_weight=sw[:30] * c)
    _check_certificate(clf, ref.training_errors_, c)


#: (seed, optimum by the enumeration): seed 1 has an optimum of two weights of 0.001, whose
#: bound an absolute slack of 1e-6 once put 0.1 % below the errors (not certified)
MIXED = [(1, 0.002), (2, 1004.005)]


@pytest.mark.parametrize("mip_solver", ["highs", "gurobi"])
@pytest.mark.parametrize("c", [1e-9, 1.0, 1e9])
@pytest.mark.parametrize(("seed", "optimum"), MIXED)
def test_mixed_weights_are_certified_within_the_relative_tolerance(seed, optimum, c, mip_solver):
    X, y, sw = _mixed_data(seed)
    clf = ICEClassifier(method="iis_cover", mip_solver=mip_solver).fit(X, y, sample_weight=sw * c)
    _check_certificate(clf, optimum, c)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("method", ["exact", "iis_cover", "auto"])
def test_small_instances_against_brute_force_in_any_units(method, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(11, 3))
    y = (X[:, 0] + rng.normal(size=11) > 0).astype(int)
    sw = rng.choice([0.001, 1.0, 1000.0], 11) * rng.uniform(0.5, 1.5, 11)
    optimum = brute_force_min01(X, sw * y, sw * (1 - y))
    fits = [ICEClassifier(method=method).fit(X, y, sample_weight=sw * c) for c in SCALES]
    for c, clf in zip(SCALES, fits, strict=True):
        _check_certificate(clf, optimum, c)
        assert np.array_equal(clf.predict(X), fits[0].predict(X))


@pytest.mark.parametrize("solver", ["highs", "gurobi"])
def test_cover_model_bounds_scale_with_the_costs(solver):
    rng = np.random.default_rng(0)
    cost = rng.uniform(0.5, 1.5, 30)  # not integers: no rounding up of the bounds
    cuts = [rng.choice(30, 4, replace=False) for _ in range(40)]
    out = {}
    for c in SCALES:
        cm = CoverModel(cost * c, solver=solver)
        cm.add_cuts(cuts)
        lp_x, lp_bound, _ = cm.solve(integer=False)
        x, bound, optimal = cm.solve(integer=True)
        assert optimal and lp_bound <= bound <= cost @ x * c
        # the LP's bound comes from its dual point: at most the LP optimum, barely below it
        assert lp_bound <= cost @ lp_x * c <= lp_bound * (1 + 2 * BOUND_RTOL)
        out[c] = (lp_bound / c, bound / c, cost @ x)
    ref = out[1.0]
    for lp_bound, bound, value in out.values():
        assert lp_bound == pytest.approx(ref[0], rel=1e-9)
        assert bound == pytest.approx(ref[1], rel=1e-9)
        assert value == pytest.approx(ref[2], rel=1e-12)


@pytest.mark.parametrize("solver", ["highs", "gurobi"])
def test_cover_model_integer_costs_in_any_unit(solver):
    """Integer costs are solved in the unit of their common divisor: in large units (unit
    weights x1e9) the bounds, rounded up to that unit, and the cutoff's answers are the
    unit costs' times the factor, exactly (they were read 1e-6 below, in units of 1)."""
    rng = np.random.default_rng(0)
    cost = rng.integers(1, 4, 30).astype(float)
    cuts = [rng.choice(30, 4, replace=False) for _ in range(40)]
    ref = CoverModel(cost, solver=solver)
    ref.add_cuts(cuts)
    _, best, optimal = ref.solve()
    assert optimal and best == np.round(best)
    for c in (3.0, 1e9, 2.0**40):
        cm = CoverModel(cost * c, solver=solver)
        cm.add_cuts(cuts)
        assert cm.integral and cm.scale == c
        x, bound, optimal = cm.solve()
        assert optimal and bound == best * c == cost @ x * c
        # no cover better than the optimum by half the unit: none found, and the bound
        # rounded up to the optimum
        x, bound, _ = cm.solve(cutoff=(best - 0.5) * c, first=True)
        assert x is None and bound == best * c


def test_deep_ice_integer_weights_in_thousands():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    y = (np.abs(X[:, 0]) + 0.5 * rng.normal(size=12) > 0.7).astype(int)
    sw = rng.integers(1, 4, 12).astype(float)
    a = DeepICEMaxoutClassifier(n_hyperplanes=2, device="cpu").fit(X, y, sample_weight=sw)
    b = DeepICEMaxoutClassifier(n_hyperplanes=2, device="cpu").fit(X, y,
                                                                   sample_weight=sw * 1000)
    assert a.is_optimal_ and b.is_optimal_
    assert b.training_errors_ == 1000 * a.training_errors_
    assert b.lower_bound_ == 1000 * a.lower_bound_ and b.gap_ == a.gap_ == 0.0
    assert np.array_equal(a.predict(X), b.predict(X))


def test_mrc_weights_count_samples():
    """MRC's weights count samples: ``lambda`` is ``s`` std over ``sqrt(total weight)``, so
    weights times ``c`` are the problem of ``s / sqrt(c)``, in every other respect the same
    (the bounds are risks, not in the weights' units)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
    sw = rng.uniform(0.5, 1.5, 40)
    kw = dict(eps1=1e-9, tol=1e-9, random_state=0)
    for c in (1e-8, 1e8):
        a = MRCCCG(s=0.3 / np.sqrt(c), **kw).fit(X, y, sample_weight=sw)
        b = MRCCCG(s=0.3, **kw).fit(X, y, sample_weight=sw * c)
        assert a.converged_ and b.converged_
        np.testing.assert_allclose(b.tau_, a.tau_, rtol=1e-9)
        np.testing.assert_allclose(b.lambda_, a.lambda_, rtol=1e-9)
        assert b.upper_ == pytest.approx(a.upper_, abs=1e-7)
        assert b.lower_ == pytest.approx(a.lower_, abs=1e-7)
        assert b.lower_ <= b.upper_ <= b.lower_ + 1e-6


def test_threshold_net_objective_is_in_the_weights_units():
    """``sum_i s_i loss_i + beta |w|_1``: weights and ``beta`` times ``c`` give the same
    network with ``objective_`` and ``dual_gap_`` times ``c`` (still within ``tol`` of the
    zero network's loss, a relative certificate)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    sw = rng.uniform(0.5, 1.5, 8)
    loss0 = 0.5 * sw.sum()  # the zero network's squared loss on targets +-1
    ref = ThresholdNetLasso(beta=0.05, arrangements="exact", solver="sklearn", tol=1e-9,
                            max_iter=100000).fit(X, y, sample_weight=sw)
    assert ref.is_optimal_
    for c in SCALES:
        clf = ThresholdNetLasso(beta=0.05 * c, arrangements="exact", solver="sklearn",
                                tol=1e-9, max_iter=100000).fit(X, y, sample_weight=sw * c)
        assert clf.is_optimal_
        assert clf.objective_ / c == pytest.approx(ref.objective_, rel=1e-6)
        assert 0.0 <= clf.dual_gap_ / c <= 1e-9 * loss0
        np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(X),
                                   atol=1e-4)
