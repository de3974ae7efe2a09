"""Awkward but valid data, and invalid data, thrown at every estimator.

Each estimator must either raise a clear error (invalid input) or return a model whose
certificates hold when re-checked on that model: realized training errors equal the reported
ones, lower bounds are below an independent brute-force optimum, ``is_optimal_`` means the
brute-force optimum was reached, MRC's bounds sandwich the training loss of its randomized
rule, and probabilities are finite distributions.

The generators are seeded (reproducible in CI); every case is small enough for brute force.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from _helpers import brute_force_min01, brute_force_network
from sklearn.exceptions import ConvergenceWarning

from exactclf import (
    MRCCCG,
    DeepICEMaxoutClassifier,
    ICEClassifier,
    NGDClassifier,
    ThresholdNetLasso,
)

# -- generators of awkward but valid binary data -------------------------------------------


def _base(rng, n, d):
    return rng.normal(size=(n, d))


def gaussian(rng, n, d):
    X = _base(rng, n, d)
    return X, (X[:, 0] + 0.7 * rng.normal(size=n) > 0).astype(int)


def duplicates(rng, n, d):  # repeated rows, some with conflicting labels
    X = rng.integers(0, 3, size=(max(2, n // 2), d)).astype(float)
    X = X[rng.integers(0, len(X), size=n)]
    return X, rng.integers(0, 2, size=n)


def integer_grid(rng, n, d):
    X = rng.integers(-2, 3, size=(n, d)).astype(float)
    return X, (X.sum(axis=1) + rng.integers(-1, 2, size=n) > 0).astype(int)


def collinear(rng, n, d):
    # direction and offset on a grid of 2**-20, so that the points are exactly on the line:
    # a real direction rounds them off it, by an ulp, and a line can use that (see
    # test_a_line_rounded_in_float64_is_not_certified)
    t = rng.integers(-4, 5, size=(n, 1)).astype(float)
    X = t @ _on_grid(rng.normal(size=(1, d))) + _on_grid(rng.normal(size=(1, d)))
    return X, (t[:, 0] % 3 == 0).astype(int)


def _on_grid(a):
    return np.round(a * 2**20) / 2**20


def offset(rng, n, d):  # one feature carries a huge offset: its variation is still data
    X, y = gaussian(rng, n, d)
    X[:, 0] += 1e10
    return X, y


def timestamps(rng, n, d):  # Unix times within ten minutes
    X, y = gaussian(rng, n, d)
    X[:, -1] = 1.7e9 + 60 * X[:, -1]
    return X, y


def tiny_scale(rng, n, d):
    X, y = gaussian(rng, n, d)
    return X * 1e-200, y


def huge_scale(rng, n, d):
    X, y = gaussian(rng, n, d)
    return X * 1e150, y


def thin_margin(rng, n, d):  # strictly separable with a margin of 1e-6
    X = _base(rng, n, d)
    a = rng.normal(size=d)
    s = X @ a
    y = (s > np.median(s)).astype(int)
    X += np.outer(np.where(y == 1, 1e-6, -1e-6) - s, a) / (a @ a)  # onto the plane +- 1e-6
    return X, y


def one_point(rng, n, d):  # a single unique row with both labels
    X = np.tile(rng.normal(size=(1, d)), (n, 1))
    y = np.r_[0, 1, rng.integers(0, 2, size=n - 2)]
    return X, y


GENERATORS = [gaussian, duplicates, integer_grid, collinear, offset, timestamps, tiny_scale,
              huge_scale, thin_margin, one_point]


def _cases(n_seeds, n, d):
    for gen in GENERATORS:
        for seed in range(n_seeds):
            yield pytest.param(gen, seed, n, d, id=f"{gen.__name__}-{seed}")


def _data(gen, seed, n, d):
    rng = np.random.default_rng(seed)
    X, y = gen(rng, n, d)
    w = rng.integers(0, 4, size=len(y)).astype(float)
    w[:2] = 1.0  # keep both labels present with positive weight
    y[:2] = [0, 1]
    return X, y, w


def _merged(X, y, w):
    U, inv = np.unique(X, axis=0, return_inverse=True)
    inv = inv.ravel()
    wpos = np.bincount(inv, weights=w * (y == 1), minlength=len(U))
    wneg = np.bincount(inv, weights=w * (y == 0), minlength=len(U))
    return U, wpos, wneg


def _standardized(U):
    """Brute force runs on standardized copies: an affine change of units does not change
    which labelings a hyperplane realizes."""
    c = U - U.mean(axis=0)
    s = np.abs(c).max(axis=0)
    s[s == 0] = 1.0
    return c / s


def _realized(clf, X, y, w):
    return float(w[clf.predict(X) != y].sum())


def _fit(est, X, y, w):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y, sample_weight=w)


def _assert_certified(clf, X, y, w, opt, must_prove):
    """The model errs as it reports, its bound is below the brute-force optimum ``opt``,
    and an optimal claim (required with ``must_prove``) is that optimum."""
    assert clf.training_errors_ == pytest.approx(_realized(clf, X, y, w))
    assert clf.lower_bound_ <= opt + 1e-9 <= clf.training_errors_ + 2e-9
    assert clf.is_optimal_ or not must_prove, "small data must be proven"
    if clf.is_optimal_:
        assert clf.training_errors_ == pytest.approx(opt)


# -- exact 0-1 estimators: certificates against brute force --------------------------------


@pytest.mark.parametrize("gen, seed, n, d", list(_cases(3, 9, 2)))
def test_ice_certificates_hold(gen, seed, n, d):
    X, y, w = _data(gen, seed, n, d)
    clf = _fit(ICEClassifier(), X, y, w)
    U, wpos, wneg = _merged(X, y, w)
    _assert_certified(clf, X, y, w, brute_force_min01(_standardized(U), wpos, wneg), True)


@pytest.mark.parametrize("gen, seed, n, d", list(_cases(2, 7, 2)))
def test_deepice_certificates_hold(gen, seed, n, d):
    X, y, w = _data(gen, seed, n, d)
    clf = _fit(DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact"), X, y, w)
    U, wpos, wneg = _merged(X, y, w)
    _assert_certified(clf, X, y, w, brute_force_network(_standardized(U), wpos, wneg, 2), True)


@pytest.mark.parametrize("gen, seed, n, d", list(_cases(1, 9, 2)))
def test_ice_beyond_the_exact_range_certificates_hold(monkeypatch, gen, seed, n, d):
    """The path of large data (local search, local IIS cover, random partitions, then the
    enumeration in the time left) forced onto small awkward data: the bounds it proves on
    the way must hold against brute force."""
    from exactclf._zero_one import _portfolio

    monkeypatch.setattr(_portfolio, "_LOCAL_FROM_SECONDS", 0.0)
    monkeypatch.setattr(_portfolio, "worth_searching", lambda n, dim: True)
    X, y, w = _data(gen, seed, n, d)
    clf = _fit(ICEClassifier(time_limit=1.0), X, y, w)
    U, wpos, wneg = _merged(X, y, w)
    _assert_certified(clf, X, y, w, brute_force_min01(_standardized(U), wpos, wneg), False)


@pytest.mark.parametrize("gen, seed, n, d", list(_cases(1, 7, 2)))
def test_deepice_portfolio_certificates_hold(monkeypatch, gen, seed, n, d):
    """The portfolio (heuristics, obstruction and partition bounds, sampled exact search)
    forced onto small awkward data, each case with a short budget: its bound must hold for
    both polarities, and an optimal claim must be the brute-force optimum."""
    from exactclf.maxout import _deepice

    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    X, y, w = _data(gen, seed, n, d)
    clf = _fit(DeepICEMaxoutClassifier(n_hyperplanes=2, time_limit=2.0, random_state=seed),
               X, y, w)
    U, wpos, wneg = _merged(X, y, w)
    # one distinct point: a single half-space, the linear problem's exact search
    assert clf.method_ == ("portfolio" if len(U) > 1 else "exact")
    _assert_certified(clf, X, y, w, brute_force_network(_standardized(U), wpos, wneg, 2), False)


# -- convex estimators: certificates re-checked on the returned model ----------------------


@pytest.mark.parametrize("gen, seed, n, d", list(_cases(2, 30, 2)))
def test_threshold_lasso_certificate_holds(gen, seed, n, d):
    X, y, w = _data(gen, seed, n, d)
    clf = _fit(ThresholdNetLasso(n_arrangements=40, random_state=seed), X, y, w)
    assert np.isfinite(clf.dual_gap_) and clf.dual_gap_ >= 0
    if clf.is_optimal_:
        assert clf.dual_gap_ <= max(clf.tol, 1e-6) * 10
    assert np.all(np.isfinite(clf.decision_function(X)))
    assert set(clf.predict(X)) <= set(clf.classes_)


@pytest.mark.parametrize("gen, seed, n, d", list(_cases(2, 30, 2)))
def test_mrc_bounds_sandwich_the_randomized_rule(gen, seed, n, d):
    X, y, _ = _data(gen, seed, n, d)
    clf = MRCCCG().fit(X, y)
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    train_loss = float(np.mean(1.0 - proba[np.arange(len(y)), np.searchsorted(clf.classes_, y)]))
    # the empirical distribution lies in the uncertainty set: lower_ <= R* and the randomized
    # rule's expected loss on it is at most the worst case upper_
    assert clf.lower_ <= clf.upper_ + 1e-9
    assert train_loss <= clf.upper_ + 1e-6


@pytest.mark.parametrize("gen, seed, n, d", list(_cases(1, 30, 2)))
def test_ngd_returns_finite_distributions(gen, seed, n, d):
    X, y, _ = _data(gen, seed, n, d)
    clf = _fit(NGDClassifier(hidden_layer_sizes=(4,), max_iter=20, random_state=seed), X, y,
               None)
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)


def _fit_plain(est, X, y, w):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


# -- invalid input: a clear error, never a model -------------------------------------------

ESTIMATORS = [
    ICEClassifier(),
    DeepICEMaxoutClassifier(n_hyperplanes=2),
    ThresholdNetLasso(n_arrangements=20, random_state=0),
    MRCCCG(),
    NGDClassifier(hidden_layer_sizes=(4,), max_iter=5, random_state=0),
]


def _invalid():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    y = np.r_[np.zeros(6, int), np.ones(6, int)]
    nan = X.copy()
    nan[3, 1] = np.nan
    inf = X.copy()
    inf[0, 0] = np.inf
    overflow = X.copy()
    overflow[0, 0] = 1.7e308
    overflow[1, 0] = -1.7e308
    cases = [
        ("nan", nan, y, r"NaN|nan|finite"),
        ("inf", inf, y, r"inf|finite|large"),
        ("one class", X, np.zeros(12, int), r"class"),
        ("wrong shape", X[:, :, None], y, r"dim|shape|2D|2d"),
        ("length mismatch", X, y[:-1], r"inconsistent|samples|length"),
        ("overflow", overflow, y, r"overflow|large|range|finite|hold"),
    ]
    for case in cases:
        yield pytest.param(*case, id=case[0])


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("case, X, y, match", list(_invalid()))
def test_invalid_input_gets_a_clear_error(est, case, X, y, match):
    with pytest.raises((ValueError, OverflowError), match=match):
        _fit_plain(est, X, y, None)


# -- geometry at the resolution of float64 ---------------------------------------------------


def _thin_strip(seed, gap, n=40):
    """Two parallel lines ``gap`` apart (the spread along them is 2), rotated so that both
    features vary: strictly separable by one line; also that line in float64."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(-1, 1, n))
    y = rng.permutation(np.arange(n) % 2)
    c, s = np.cos(0.3), np.sin(0.3)
    X = np.c_[t, y * gap] @ np.array([[c, s], [-s, c]])
    w = np.array([-s, c])
    b = -((X @ w)[y == 0].max() + (X @ w)[y == 1].min()) / 2
    assert np.all((X @ w + b > 0) == y)
    return X, y


@pytest.mark.parametrize("gap", [3e-5, 1e-9, 3e-10, 1e-11, 1e-13])
@pytest.mark.parametrize("seed", [0, 3])
def test_thin_strips_are_resolved_not_projected(seed, gap):
    """A direction 1e-13 of the widest is data, not rounding: every exact search finds the
    separating line (an earlier frame projected it away and certified 15 errors)."""
    X, y = _thin_strip(seed, gap)
    for est in (ICEClassifier(), DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact")):
        clf = _fit_plain(est, X, y, None)
        assert clf.training_errors_ == 0 == (clf.predict(X) != y).sum()
        assert clf.is_optimal_


@pytest.mark.parametrize("gap", [3e-15, 1e-15, 3e-16])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_strips_at_the_rounding_level_are_not_certified(seed, gap):
    """Two lines a few ulps apart, still separable by a line in float64: the frame drops that
    direction as rounding, so the fit on the projection (13-16 errors) must not claim to be
    optimal (it did; at 3e-16, 2 eps of the spread, until the frame checked in exact
    arithmetic that the points lie in the subspace it keeps)."""
    X, y = _thin_strip(seed, gap)
    for est in (ICEClassifier(), DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf = est.fit(X, y)
        assert clf.training_errors_ == (clf.predict(X) != y).sum()
        assert clf.is_optimal_ == (clf.training_errors_ == 0)
        assert clf.lower_bound_ == 0


@pytest.mark.parametrize("seed", [0, 3])
def test_a_line_rounded_in_float64_is_not_certified(seed):
    """The points of a rotated line, rounded to float64, are off the line by an ulp: the
    best line through that rounding (found on an exact rational image of the points, their
    offsets from the line magnified 2**54 times, and re-checked in rational arithmetic)
    makes fewer errors than the optimum on the line (13 against 16 for seed 0, 10 against 15
    for seed 3), which was certified."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(-1, 1, 40))
    y = rng.permutation(np.arange(40) % 2)
    c, s = np.cos(0.3), np.sin(0.3)
    X = np.c_[t, 0 * t] @ np.array([[c, s], [-s, c]])
    ice = _fit_plain(ICEClassifier(), X, y, None)
    for clf in (ice, _fit_plain(DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact"),
                                X, y, None)):
        assert not clf.is_optimal_ and clf.lower_bound_ == 0
    slope = Fraction(s / c)
    off = [(Fraction(x2) - slope * Fraction(x1)) * 2**54 for x1, x2 in X]
    best = _fit_plain(ICEClassifier(), np.c_[X[:, 0], np.array(off, dtype=float)], y, None)
    (a1, a2), b = map(Fraction, best.coef_[0]), Fraction(best.intercept_[0])
    exact = sum(int(a1 * Fraction(x1) + a2 * o + b > 0) != label
                for (x1, _), o, label in zip(X, off, y, strict=True))
    assert exact == best.training_errors_ < ice.training_errors_


@pytest.mark.parametrize("seed", [0, 3])
def test_thin_points_are_not_certified(seed):
    """Beyond the condition number the searches resolve, a fit with errors says it is not
    proven (the geometric decisions are not reliable), with a warning, and its bound is the
    conflicts'."""
    X, y = _thin_strip(seed, 1e-9)
    y[[13, 19, 20, 27]] = 1 - y[[13, 19, 20, 27]]
    for est in (ICEClassifier(), DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf = est.fit(X, y)
        assert clf.lower_bound_ == 0
        assert clf.training_errors_ == (clf.predict(X) != y).sum()
        if isinstance(est, ICEClassifier):  # one line cannot fit the flipped labels
            assert clf.training_errors_ > 0
        if clf.training_errors_ > 0:  # (two planes may)
            assert not clf.is_optimal_
            assert any(issubclass(w.category, ConvergenceWarning) and "thin" in str(w.message)
                       for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        tnl = ThresholdNetLasso(arrangements="exact").fit(X[:12], y[:12])
    assert not tnl.is_optimal_


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_zero_weights_leaving_one_class(est):
    """Both classes in y, but only one with positive weight: the model predicts it (MRCCCG
    treats a class without weight as absent, so it refuses one class, clearly)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(8, 2))
    y = np.array([0, 1, 0, 1, 1, 0, 1, 0])
    for kept in ([2], [0, 2, 5, 7], [3]):
        sw = np.zeros(8)
        sw[kept] = 1.0
        if isinstance(est, MRCCCG):
            with pytest.raises(ValueError, match="at least 2 classes"):
                est.fit(X, y, sample_weight=sw)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf = est.fit(X, y, sample_weight=sw)
        np.testing.assert_array_equal(clf.classes_, [0, 1])
        if not isinstance(est, NGDClassifier):  # gradient training: no guarantee in 5 steps
            np.testing.assert_array_equal(clf.predict(X[kept]), y[kept])


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_refused_refit_leaves_an_unfitted_estimator(est):
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = _fit_plain(clone(est), X, y, None)
    with pytest.raises(ValueError):
        clf.fit(X, np.zeros(20, int))
    assert not hasattr(clf, "classes_")
    with pytest.raises(NotFittedError):
        clf.predict(X)
