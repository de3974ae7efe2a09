"""Metamorphic tests of ICEClassifier's high-dimensional path (D = 9 to 12).

From D = 5 on, ICEClassifier proves its optimum by the IIS cover (a set-cover MIP master on
HiGHS, IIS cuts from an LP oracle); from D = 9 (``_portfolio._HIGH_DIM``) the big-M MILP
gets a turn for incumbents, and the master stops at the first cover below the cutoff while
rounds improve the incumbent. Every one of those steps depends on the order of the rows, on
which label is positive, on the units of the weights (the cutoff and the bound's slack) and
of the features (the LP oracle's tolerances). A change that leaves a training problem the
same problem must leave its certificate the same:

* ``is_optimal_`` (every fit here must prove its optimum within a generous time limit);
* ``training_errors_`` (weighted, in the moved problem's weight units) and ``lower_bound_``,
  within the IIS cover's relative tolerance, never an absolute one (weights of 1e-6);
* ``exactclf.verify`` passes on both fits, and ``predict`` realizes the certified errors.

The instances are noisy linear labels (10 % of the labels flipped, integer or real weights)
on 55 to 60 points in D = 9, 10 and 12: Gaussian points, points on the integer grid
{0, 1, 2}^D (many coplanar subsets), and 12 features that are integer combinations of 9 (an
exactly 9-dimensional affine hull, which must also certify what the 9 features do). The
transformations are those of the task: row order, class names (the positive class swapped),
weights times 1e-6, 3 and 1e6, integer weights as repeated rows, one feature's units
(``a x_j + b``, a = 1e-3 and 1e4, b = 1e6) and an affine map of all features. On the grid and
subspace points the changes of units are exact in float64 (powers of two, integer maps):
there rounding would move points off the planes they are on, a different problem whose
certificate may rightly differ (it does: the cover then stops, "numerical"). The MILP's
turn for incumbents is forced on every instance. On three instances of 34 points in D = 9
the optimum is also checked against the enumeration (``method="exact"``, a different
algorithm; about 6 s each here, where 40 points take 20 s).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from functools import partial

import numpy as np
import pytest
from _helpers import assert_verifies
from sklearn.exceptions import ConvergenceWarning

from exactclf import ICEClassifier, verify
from exactclf._certificate import Certificate
from exactclf._zero_one import _portfolio
from exactclf._zero_one._cover import BOUND_RTOL
from exactclf._zero_one._iis import IISCoverSolver
from exactclf._zero_one._min01 import labeling_errors, majority_labeling

#: generous: every fit here proves in about a second (the MILP turn comes after twice
#: min(5 s, a tenth of it), so a fit of the normal path never reaches it)
TIME_LIMIT = 60.0
#: sums of the same weights in another order, or times a constant
RTOL = 1e-9
#: the IIS cover's bound holds within HiGHS's relative slack (ICEClassifier.lower_bound_)
IIS_RTOL = 2 * BOUND_RTOL + RTOL


# -- instances -------------------------------------------------------------------------------


def _labels(rng, Z, noise):
    """Labels of a random affine rule on ``Z``, with a ``noise`` share of them flipped."""
    n, d = Z.shape
    rule = rng.normal(size=d)
    score = (Z - Z.mean(axis=0)) @ rule
    y = (score > 0).astype(int)
    flip = rng.choice(n, round(noise * n), replace=False)
    y[flip] = 1 - y[flip]
    return y


def _weights(rng, n, kind):
    if kind == "integer":  # the master's integral cutoff (a cover must be better by >= 1)
        return rng.integers(1, 4, n).astype(float)
    if kind == "real":  # the master's relative cutoff
        return rng.uniform(0.5, 1.5, n)
    raise ValueError(kind)


def gaussian(seed, n, d, weights="integer", noise=0.1):
    rng = np.random.default_rng([seed, n, d])
    X = rng.normal(size=(n, d))
    return X, _labels(rng, X, noise), _weights(rng, n, weights)


def grid(seed, n, d, weights="integer", noise=0.1):
    """Points on the integer grid {0, 1, 2}^d: many coplanar subsets (and possibly
    duplicates)."""
    rng = np.random.default_rng([seed, n, d, 1])
    X = rng.integers(0, 3, size=(n, d)).astype(float)
    return X, _labels(rng, X, noise), _weights(rng, n, weights)


def _subspace_parts(seed, n, d, k=9, noise=0.1):
    """Integer points ``Z`` in dimension ``k``, an integer map ``B`` of rank ``k`` to
    dimension ``d``: ``Z @ B`` lies exactly (in float64) in a ``k``-dimensional subspace."""
    rng = np.random.default_rng([seed, n, d, 2])
    Z = rng.integers(-4, 5, size=(n, k)).astype(float)
    while True:
        B = rng.integers(-2, 3, size=(k, d)).astype(float)
        if np.linalg.matrix_rank(B) == k:
            break
    return Z, B, _labels(rng, Z, noise), rng.integers(1, 4, n).astype(float)


def subspace(seed, n, d, weights="integer", noise=0.1):
    """``d`` features that are integer combinations of 9 (exact integers in float64)."""
    assert weights == "integer"
    Z, B, y, w = _subspace_parts(seed, n, d, noise=noise)
    X = Z @ B
    assert np.array_equal(X, np.round(X)) and np.abs(X).max() < 2**52
    return X, y, w


# -- pairs of problems -----------------------------------------------------------------------


@dataclass
class Pair:
    """A base problem ``(X, y, w)`` and its moved copy, whose certificate must be the base's
    with weights (so errors and bounds) ``units`` times larger."""

    base: tuple
    moved: tuple
    units: float = 1.0


def _permute(X, y, w, rng):
    p = rng.permutation(len(y))
    return Pair((X, y, w), (X[p], y[p], w[p]))


def _rename(X, y, w, rng, names):
    """Labels renamed to strings; ``["yes", "no"]`` sorts the other way round, so the
    moved problem's positive class is the base's negative one."""
    return Pair((X, y, w), (X, np.array(names)[y], w))


def _scale_weights(X, y, w, rng, c):
    return Pair((X, y, w), (X, y, w * c), units=c)


def _repeat_rows(X, y, w, rng):
    """Integer weights against as many unweighted copies of each row, shuffled."""
    assert np.array_equal(w, np.round(w))
    idx = rng.permutation(np.repeat(np.arange(len(y)), w.astype(int)))
    return Pair((X, y, w), (X[idx], y[idx], None))


def _one_feature_units(X, y, w, rng, a, b):
    """``x_j -> a x_j + b`` for one feature ``j`` (in float64, rounded)."""
    j = rng.integers(X.shape[1])
    Xm = X.copy()
    Xm[:, j] = a * X[:, j] + b
    return Pair((X, y, w), (Xm, y, w))


def _one_feature_units_exactly(X, y, w, rng, a, b):
    """``x_j -> a x_j + b`` for one feature ``j``, ``a`` and ``b`` powers of two that keep
    the integer coordinates exact: the moved points are exactly the image of the base ones
    (rounding would move coplanar points off their plane, a different problem)."""
    pair = _one_feature_units(X, y, w, rng, a, b)
    Xm = pair.moved[0]
    j = np.flatnonzero(np.any(Xm != X, axis=0))
    assert len(j) == 1 and np.array_equal((Xm[:, j] - b) / a, X[:, j])
    return pair


def _all_features_affine(X, y, w, rng):
    """``X @ A + b``: ``A`` an orthogonal matrix times positive scales from 0.5 to 2
    (condition number at most 4, checked), ``b`` offsets up to 1e6 (in float64, rounded)."""
    d = X.shape[1]
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    A = Q * rng.uniform(0.5, 2.0, d)
    assert np.linalg.cond(A) <= 4.0 + 1e-9
    return Pair((X, y, w), (X @ A + rng.uniform(-1e6, 1e6, d), y, w))


def _all_features_affine_exactly(X, y, w, rng):
    """``X @ A + b`` for integer ``X``: ``A`` an integer matrix of condition number below 30,
    ``b`` integer offsets up to 1e6; every value an integer below 2**53, so exact."""
    assert np.array_equal(X, np.round(X))
    d = X.shape[1]
    while True:
        A = rng.integers(-2, 3, size=(d, d)).astype(float)
        if np.linalg.cond(A) < 30:
            break
    Xm = X @ A + rng.integers(-10**6, 10**6, d).astype(float)
    assert np.abs(X).max() * np.abs(A).sum(axis=0).max() + 10**6 < 2**52
    return Pair((X, y, w), (Xm, y, w))


#: the transformations, each exact where the points are degenerate (integer grids and
#: subspaces: rounding would move points off the planes they are on, a different problem
#: whose certificate may rightly differ)
GENERAL_POSITION = {
    "permute": _permute,
    "rename-no-yes": partial(_rename, names=["no", "yes"]),
    "rename-swapped": partial(_rename, names=["yes", "no"]),
    "weights-x1e-6": partial(_scale_weights, c=1e-6),
    "weights-x3": partial(_scale_weights, c=3.0),
    "weights-x1e6": partial(_scale_weights, c=1e6),
    "repeat-rows": _repeat_rows,
    "feature-x1e-3+1e6": partial(_one_feature_units, a=1e-3, b=1e6),
    "feature-x1e4+1e6": partial(_one_feature_units, a=1e4, b=1e6),
    "all-features-affine": _all_features_affine,
}
DEGENERATE = {
    "permute": _permute,
    "rename-swapped": partial(_rename, names=["yes", "no"]),
    "weights-x1e-6": partial(_scale_weights, c=1e-6),
    "weights-x1e6": partial(_scale_weights, c=1e6),
    "repeat-rows": _repeat_rows,
    "feature-x2^-10+2^20": partial(_one_feature_units_exactly, a=2.0**-10, b=2.0**20),
    "feature-x2^13+2^20": partial(_one_feature_units_exactly, a=2.0**13, b=2.0**20),
    "all-features-affine": _all_features_affine_exactly,
}
#: (generator, seed, n, d): each proves in well under a second, with an optimum of 2 to 6
#: weighted errors (an optimum of 0 would make most comparisons vacuous)
INSTANCES = {
    "gaussian-d9-n55": (gaussian, 1, 55, 9),
    "gaussian-d10-n60": (gaussian, 0, 60, 10),
    "gaussian-d12-n60": (gaussian, 5, 60, 12),
    "grid-d9-n60": (grid, 0, 60, 9),
    "grid-d12-n60": (grid, 0, 60, 12),
    "subspace-d12-n60": (subspace, 0, 60, 12),
}


def _instance(name, weights="integer"):
    gen, seed, n, d = INSTANCES[name]
    X, y, w = gen(seed, n, d, weights)
    return X, y, w, np.random.default_rng([seed, n, d, 3])


def _cases():
    for name, (gen, *_) in INSTANCES.items():
        table = GENERAL_POSITION if gen is gaussian else DEGENERATE
        for t, transform in table.items():
            yield pytest.param(name, transform, id=f"{name}-{t}")


# -- fitting ---------------------------------------------------------------------------------

_FITS: dict = {}


def _fit(X, y, w):
    """ICEClassifier fitted and checked by :func:`_check_fit` (memoized on the data's bytes:
    base problems recur across transformations)."""
    key = (X.shape, X.tobytes(), np.asarray(y).tobytes(), None if w is None else w.tobytes())
    if key not in _FITS:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)  # a fit that does not prove
            clf = ICEClassifier(device="cpu", time_limit=TIME_LIMIT).fit(X, y, sample_weight=w)
        _check_fit(clf, X, y, w)
        _FITS[key] = clf
    return _FITS[key]


def _realized(clf, X, y, w):
    wrong = np.asarray(clf.predict(X)) != np.asarray(y)
    return float(wrong.sum() if w is None else w[wrong].sum())


def _check_fit(clf, X, y, w):
    """A proven optimum, certified by a bound within the cover's relative tolerance, that
    ``predict`` realizes and ``verify`` accepts (the certificate read back from its JSON
    too: :func:`assert_verifies` verifies that in the test of each base instance)."""
    assert clf.is_optimal_, (clf.stop_reason_, clf.training_errors_, clf.lower_bound_)
    assert clf.stop_reason_ is None
    assert np.isclose(_realized(clf, X, y, w), clf.training_errors_, rtol=RTOL, atol=0)
    assert clf.lower_bound_ <= clf.training_errors_
    assert clf.lower_bound_ >= clf.training_errors_ * (1 - 2 * BOUND_RTOL)
    assert clf.gap_ <= 2 * BOUND_RTOL
    report = verify(clf, X, y, w)
    assert report.ok, str(report)
    assert Certificate.from_dict(json.loads(clf.certificate_.to_json())) == clf.certificate_


def _assert_same_certificate(b, m, c=1.0):
    """``m`` (weights in units of ``c``) certifies what ``b`` does: relative tolerances
    only (``rtol * max(1, |x|)`` would accept anything below weights of 1e-6)."""
    assert m.is_optimal_ == b.is_optimal_
    assert np.isclose(m.training_errors_ / c, b.training_errors_, rtol=IIS_RTOL, atol=0)
    assert np.isclose(m.lower_bound_ / c, b.lower_bound_, rtol=IIS_RTOL, atol=0)
    # one problem, one optimum: neither bound may exceed the other's errors
    assert b.lower_bound_ <= m.training_errors_ / c * (1 + RTOL)
    assert m.lower_bound_ / c <= b.training_errors_ * (1 + RTOL)


# -- the tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", INSTANCES)
def test_instance_exercises_the_high_dimensional_cover(name):
    """The comparisons below mean something only where the optimum is not zero and the
    path under test runs: the IIS cover from D = 9 on (subspace: of dimension 9)."""
    X, y, w, _ = _instance(name)
    clf = _fit(X, y, w)
    assert np.linalg.matrix_rank(X - X.mean(axis=0)) >= _portfolio._HIGH_DIM
    assert clf.training_errors_ >= 2
    assert clf.lower_bound_method_ == "IIS cover"
    assert clf.certificate_.witness.kind == "iis_cover"
    assert_verifies(clf, X, y, w)


@pytest.mark.parametrize("name, transform", list(_cases()))
def test_certificate_is_invariant(name, transform):
    X, y, w, rng = _instance(name)
    pair = transform(X, y, w, rng)
    _assert_same_certificate(_fit(*pair.base), _fit(*pair.moved), pair.units)


@pytest.mark.parametrize("c", [1e-6, 1e6])
def test_real_weights_in_any_units(c):
    """Weights that are not integers: the master's cutoff and the bound's slack are then
    relative to the incumbent, and must scale with it."""
    X, y, w, rng = _instance("gaussian-d12-n60", weights="real")
    assert not np.array_equal(w, np.round(w))
    pair = _scale_weights(X, y, w, rng, c)
    _assert_same_certificate(_fit(*pair.base), _fit(*pair.moved), c)


def test_subspace_is_its_own_lower_dimensional_problem():
    """12 features that are integer combinations of 9 (rank 9): an affine classifier on the
    12 features is one on the 9 and back, so the 9-feature problem has the same optimum, and
    the search sees the same dimension (the same number of candidate hyperplanes)."""
    gen, seed, n, d = INSTANCES["subspace-d12-n60"]
    Z, B, y, w = _subspace_parts(seed, n, d)
    low, high = _fit(Z, y, w), _fit(Z @ B, y, w)
    _assert_same_certificate(low, high)
    assert high.n_candidates_total_ == low.n_candidates_total_


#: seconds the spy gives the MILP's turn: ``None``, the forced turn's own (1 ms, it finds
#: nothing better than the cover's incumbent); 1.0, enough to find a better plane, which
#: the cover takes as its incumbent in mid-run
MILP_TURNS = {"1ms-turn": None, "turn-with-a-better-plane": 1.0}


def _milp_cases():
    """The forced turn on every instance; the better plane on one per dimension."""
    for name in INSTANCES:
        for turn, seconds in MILP_TURNS.items():
            if seconds is None or name in ("gaussian-d9-n55", "gaussian-d10-n60",
                                           "grid-d12-n60"):
                yield pytest.param(name, seconds, id=f"{name}-{turn}")


@pytest.mark.parametrize("name, milp_seconds", list(_milp_cases()))
def test_forced_milp_turn_keeps_the_optimum(name, milp_seconds, monkeypatch):
    """The big-M MILP's turn for incumbents, forced to run (the cover's first turn cut short
    to 2 ms, whatever its gap), must not change what the fit proves."""
    X, y, w, _ = _instance(name)
    base = _fit(X, y, w)
    monkeypatch.setattr(_portfolio, "_MILP_TURN_SECONDS", 1e-3)
    monkeypatch.setattr(_portfolio, "_MILP_TURN_GAP", -1.0)
    best_incumbent, candidates, turns = (_portfolio.best_incumbent,
                                         _portfolio.incumbent_candidates, [])

    def first_incumbents(Z, wpos, wneg, **kwargs):
        if milp_seconds is None:
            return candidates(Z, wpos, wneg, **kwargs)
        # the fit's first incumbents are good enough to leave the MILP nothing better to
        # find: the cover starts from the majority class instead
        positive = majority_labeling(wpos, wneg)
        return [("majority class", positive, labeling_errors(positive, wpos, wneg))], False

    def spy(Z, wpos, wneg, *, surrogate=True, **kwargs):
        assert not surrogate  # the turn
        assert kwargs["milp_time_limit"] == pytest.approx(1e-3)
        if milp_seconds is not None:
            kwargs["milp_time_limit"] = milp_seconds
        got = best_incumbent(Z, wpos, wneg, surrogate=surrogate, **kwargs)
        turns.append(got[0])
        return got

    offer, offered = IISCoverSolver.offer, []

    def spy_offer(self, positive):
        offered.append(positive)
        return offer(self, positive)

    monkeypatch.setattr(_portfolio, "best_incumbent", spy)
    monkeypatch.setattr(_portfolio, "incumbent_candidates", first_incumbents)
    monkeypatch.setattr(IISCoverSolver, "offer", spy_offer)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        forced = ICEClassifier(device="cpu", time_limit=TIME_LIMIT).fit(X, y, sample_weight=w)
    assert len(turns) == 1  # the MILP had its turn, once
    if milp_seconds is not None:  # its plane was better than the cover's, and offered
        assert any(p is turns[0] for p in offered)
    _check_fit(forced, X, y, w)
    _assert_same_certificate(base, forced)


#: (generator, seed, weights): D = 9, N = 34, where the enumeration takes 3 to 7 s on one
#: core (C(34, 9) = 5.2e7 candidate hyperplanes)
REFERENCES = {
    "gaussian-integer-weights": (gaussian, 1, "integer"),
    "gaussian-real-weights": (gaussian, 0, "real"),
    "grid-integer-weights": (grid, 3, "integer"),
}


@pytest.mark.parametrize("name", [  # the Gaussian ones take 10-16 s; CI runs the slow tests
    pytest.param(name, marks=pytest.mark.slow) if name.startswith("gaussian") else name
    for name in REFERENCES])
def test_optimum_matches_the_enumeration(name):
    """The IIS cover's proven optimum is the enumeration's (an independent algorithm)."""
    gen, seed, weights = REFERENCES[name]
    X, y, w = gen(seed, 34, 9, weights)
    clf = _fit(X, y, w)
    assert clf.lower_bound_method_ == "IIS cover" and clf.training_errors_ > w.min()
    exact = ICEClassifier(method="exact", device="cpu").fit(X, y, sample_weight=w)
    assert exact.is_optimal_ and exact.lower_bound_method_ == "exhaustive search"
    assert np.isclose(clf.training_errors_, exact.training_errors_, rtol=RTOL, atol=0)
    assert clf.lower_bound_ <= exact.training_errors_
