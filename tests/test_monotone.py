"""ICEClassifier(monotonic_cst=...): the affine rule with the fewest (weighted) training errors
among those whose coefficients have the signs asked for (+1: coef_[j] >= 0, -1:
coef_[j] <= 0), proven, against an independent brute force; invariances, the scikit-learn
encodings of the constraint, the certificate's model class and verify's checks of it, the
anytime path beyond the exact range, and the rejections."""

import dataclasses
import itertools
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.class_weight import compute_sample_weight

from exactclf import ICEClassifier, verify
from exactclf.datasets import load_dataset

#: the stages a sign-constrained fit may record
STAGES = {"incumbents", "big-M MILP with sign constraints", "enumeration with sign constraints",
          "IIS cover with sign constraints"}
AFFINE = "affine classifiers (sign(w.x + b))"


# -- the oracle -------------------------------------------------------------------------------


def _realizable(Z, positive, signs):
    """Is there (w, b) with y_i (w.z_i + b) >= 1 and signs[j] * w[j] >= 0? (LP, HiGHS)"""
    n, d = Z.shape
    s = np.where(positive, 1.0, -1.0)
    rows = [-(np.hstack([Z, np.ones((n, 1))]) * s[:, None])]
    rhs = [-np.ones(n)]
    for j in np.flatnonzero(signs):
        r = np.zeros(d + 1)
        r[j] = -signs[j]
        rows.append(r[None])
        rhs.append([0.0])
    res = linprog(np.zeros(d + 1), A_ub=np.vstack(rows), b_ub=np.concatenate(rhs),
                  bounds=[(None, None)] * (d + 1), method="highs")
    return res.status == 0


def brute_force_signed(X, y, w, signs):
    """Least weighted errors over every labeling of the distinct rows that an LP realizes
    with the signs; on standardized features (a positive rescaling and a shift keep the
    signs, and the LP fails on data with 1e6 offsets and 1e-7 spread)."""
    X = np.asarray(X, dtype=float)
    sd = X.std(axis=0)
    sd[sd == 0] = 1.0
    Z = (X - X.mean(axis=0)) / sd
    # distinct rows of the raw data, with the weight of each label there
    rows = {}
    for key, z, label, weight in zip(map(tuple, (X + 0.0).tolist()), Z, y, w, strict=True):
        pos, neg, _ = rows.get(key, (0.0, 0.0, z))
        rows[key] = (pos + weight, neg, z) if label == 1 else (pos, neg + weight, z)
    wpos = np.array([r[0] for r in rows.values()])
    wneg = np.array([r[1] for r in rows.values()])
    U = np.array([r[2] for r in rows.values()])
    costs = []
    for bits in itertools.product([False, True], repeat=len(U)):
        pos = np.array(bits)
        costs.append((math.fsum(np.r_[wneg[pos], wpos[~pos]].tolist()), pos))
    costs.sort(key=lambda t: t[0])
    for cost, pos in costs:  # cheapest first: the first realizable one is the optimum
        if _realizable(U, pos, np.asarray(signs)):
            return cost
    raise AssertionError("the constant rules are always realizable")


# -- instances --------------------------------------------------------------------------------

KINDS = ["gaussian", "grid", "duplicates", "identical", "collinear", "offset"]


def _instance(kind, seed):
    """5-8 samples, 1-3 features, weights none / integer (some 0) / non-integer, and signs."""
    rng = np.random.default_rng(1000 * KINDS.index(kind) + seed)
    n = int(rng.integers(5, 9))
    d = int(rng.integers(1, 4))
    if kind in ("identical", "collinear"):
        d = max(d, 2)
    signs = rng.integers(-1, 2, size=d)
    if kind == "gaussian":
        X = rng.normal(size=(n, d))
    elif kind == "grid":  # ties and coplanar points
        X = rng.integers(0, 3, size=(n, d)).astype(float)
    elif kind == "duplicates":  # repeated rows, labels drawn apart: some conflict
        X = rng.integers(0, 2, size=(n, d)).astype(float)
        X[n // 2:] = X[: n - n // 2]
    elif kind == "identical":  # the same feature twice, opposite signs asked
        X = rng.normal(size=(n, d))
        X[:, 1] = X[:, 0]
        signs[:2] = [1, -1]
    elif kind == "collinear":  # every feature a multiple of one, some negative
        t = rng.integers(-3, 4, size=(n, 1)).astype(float)
        X = t * rng.choice([-2.0, -1.0, 0.5, 1.0, 3.0], size=(1, d))
    else:  # huge offset, tiny spread
        X = 1e6 + 1e-7 * rng.normal(size=(n, d))
    y = rng.integers(0, 2, size=n)
    y[:2] = [0, 1]
    if not signs.any():
        signs[int(rng.integers(d))] = rng.choice([-1, 1])
    w = [None, rng.integers(0, 4, size=n).astype(float), rng.uniform(0.1, 3.0, size=n)][
        seed % 3]
    if w is not None:
        w[:2] = np.maximum(w[:2], 1.0)  # both classes weigh something
    return X, y, w, signs


def _fit(clf, X, y, w=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return clf.fit(X, y, sample_weight=w)


def _errors(clf, X, y, w=None):
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    return math.fsum(w[clf.predict(X) != np.asarray(y)].tolist())


def _assert_has_signs(clf, signs):
    coef = clf.coef_[0]
    assert coef.shape == (len(signs),)
    assert np.all(np.asarray(signs) * coef >= 0), (signs, coef)


def _check(report, name):
    """The report's check called ``name`` (exactly one)."""
    found = [c for c in report.checks if c.name == name]
    assert len(found) == 1, str(report)
    return found[0]


# -- 1. exactness -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", KINDS)
def test_matches_brute_force(kind, seed):
    X, y, w, signs = _instance(kind, seed)
    balanced = seed % 4 == 1
    clf = _fit(ICEClassifier(monotonic_cst=signs, device="cpu",
                             class_weight="balanced" if balanced else None), X, y, w)
    counted = np.ones(len(y)) if w is None else w
    if balanced:
        counted = counted * compute_sample_weight("balanced", y)
    optimum = brute_force_signed(X, y, counted, signs)
    assert clf.is_optimal_
    assert clf.training_errors_ == pytest.approx(optimum, rel=1e-12, abs=1e-12)
    assert clf.lower_bound_ <= clf.training_errors_
    assert clf.lower_bound_ == pytest.approx(optimum, rel=1e-9, abs=1e-12)
    _assert_has_signs(clf, signs)
    assert _errors(clf, X, y, counted) == pytest.approx(clf.training_errors_, rel=1e-12,
                                                       abs=0)
    stages = {row.stage for row in clf.fit_trace_}
    if np.ptp(X, axis=0).any():
        assert stages <= STAGES
    else:  # constant features: nothing to constrain, the ordinary fit (the majority class)
        assert not clf.coef_.any() and stages == {"majority class"}
    report = verify(clf, X, y, w)
    assert report.ok, str(report)
    assert _check(report, "model in its class").passed


@pytest.mark.parametrize("seed", range(8))
def test_wide_matches_brute_force(seed):
    """5-6 features, 8 samples: the IIS cover with the sign constraints as fixed rows runs
    first (its witness re-checked by verify); the brute force is still cheap at N = 8."""
    rng = np.random.default_rng(700 + seed)
    n, d = 8, int(rng.integers(5, 7))
    X = (rng.normal(size=(n, d)) if seed % 2
         else rng.integers(0, 2, size=(n, d)).astype(float))
    if seed % 4 == 0:  # duplicates, some with conflicting labels
        X[n // 2:] = X[: n - n // 2]
    y = rng.integers(0, 2, size=n)
    y[:2] = [0, 1]
    signs = rng.integers(-1, 2, size=d)
    signs[0] = rng.choice([-1, 1])
    w = [None, rng.integers(1, 4, size=n).astype(float), rng.uniform(0.1, 3.0, size=n)][
        seed % 3]
    clf = _fit(ICEClassifier(monotonic_cst=signs, device="cpu"), X, y, w)
    counted = np.ones(n) if w is None else w
    optimum = brute_force_signed(X, y, counted, signs)
    assert clf.is_optimal_, clf.certificate_.stop_reason
    assert clf.training_errors_ == pytest.approx(optimum, rel=1e-12, abs=1e-12)
    assert clf.lower_bound_ <= clf.training_errors_
    _assert_has_signs(clf, signs)
    assert _errors(clf, X, y, counted) == pytest.approx(clf.training_errors_, rel=1e-12, abs=0)
    assert {row.stage for row in clf.fit_trace_} <= STAGES
    report = verify(clf, X, y, w)
    assert report.ok, str(report)


@pytest.mark.parametrize("instance", ["minimal", "duplicates-14"])
def test_non_integer_weights_are_proven(instance):
    if instance == "minimal":
        X, y = np.array([[1.0], [1.0], [1.0], [0.0]]), np.array([0, 1, 1, 1])
        w, signs = np.array([2.5, 0.9, 0.5, 0.7]), np.array([1])
    else:
        X, y, w, signs = _instance("duplicates", 14)
    clf = _fit(ICEClassifier(monotonic_cst=signs, device="cpu"), X, y, w)
    optimum = brute_force_signed(X, y, w, signs)
    assert clf.training_errors_ == pytest.approx(optimum, rel=1e-12)
    _assert_has_signs(clf, signs)
    assert verify(clf, X, y, w).ok
    assert clf.is_optimal_, clf.certificate_.stop_reason


@pytest.mark.parametrize("seed", range(3))
def test_constraints_never_help(seed):
    """More constraints, never fewer errors: None <= one sign <= all signs; and the optimum
    with every sign forced is at least the brute force's for those signs."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(12, 3))
    y = (X @ np.array([1.0, 1.0, -1.0]) + rng.normal(size=12) > 0).astype(int)
    errors = [_fit(ICEClassifier(monotonic_cst=cst, device="cpu"), X, y).training_errors_
              for cst in (None, [0, -1, 0], [-1, -1, 0], [-1, -1, 1])]
    assert errors == sorted(errors)
    assert errors[-1] > errors[0]  # the signs oppose the data's: they cost errors


# -- 2. no constraint, or one the optimum keeps ------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_all_zero_is_unconstrained(seed):
    X, y, w, _ = _instance("gaussian" if seed % 2 else "grid", seed)
    plain = _fit(ICEClassifier(device="cpu"), X, y, w)
    zero = _fit(ICEClassifier(device="cpu", monotonic_cst=np.zeros(X.shape[1], int)), X, y, w)
    assert zero.training_errors_ == plain.training_errors_
    assert zero.is_optimal_ == plain.is_optimal_
    np.testing.assert_array_equal(zero.coef_, plain.coef_)
    np.testing.assert_array_equal(zero.intercept_, plain.intercept_)
    assert zero.certificate_.model_class == plain.certificate_.model_class == AFFINE
    assert verify(zero, X, y, w).ok


@pytest.mark.parametrize("seed", range(4))
def test_constraint_the_optimum_keeps(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(11, 3))
    y = (X @ rng.normal(size=3) + 0.7 * rng.normal(size=11) > 0).astype(int)
    plain = _fit(ICEClassifier(device="cpu"), X, y)
    signs = np.sign(plain.coef_[0]).astype(int)
    assert signs.any()
    clf = _fit(ICEClassifier(device="cpu", monotonic_cst=signs), X, y)
    assert clf.is_optimal_ and plain.is_optimal_
    assert clf.training_errors_ == plain.training_errors_
    _assert_has_signs(clf, signs)
    assert verify(clf, X, y).ok
    # and a single sign of it
    one = np.zeros_like(signs)
    one[np.flatnonzero(signs)[0]] = signs[np.flatnonzero(signs)[0]]
    assert _fit(ICEClassifier(device="cpu", monotonic_cst=one), X, y).training_errors_ == (
        plain.training_errors_)


# -- 3. invariances ---------------------------------------------------------------------------


def _invariance_instance(seed):
    """10-12 samples, 2-3 features (grid or Gaussian), signs with at least one nonzero."""
    rng = np.random.default_rng(500 + seed)
    n, d = int(rng.integers(10, 13)), int(rng.integers(2, 4))
    X = (rng.integers(-2, 3, size=(n, d)).astype(float) if seed % 2
         else rng.normal(size=(n, d)))
    y = (X @ rng.normal(size=d) + rng.normal(size=n) > 0).astype(int)
    y[:2] = [0, 1]
    signs = rng.integers(-1, 2, size=d)
    signs[0] = rng.choice([-1, 1])
    w = rng.integers(1, 4, size=n).astype(float) if seed % 3 == 0 else None
    return X, y, w, signs


def _same_answer(a, b):
    assert a.is_optimal_ and b.is_optimal_
    assert b.training_errors_ == a.training_errors_
    assert b.lower_bound_ == a.lower_bound_


@pytest.mark.parametrize("seed", range(4))
def test_positive_rescaling_and_shift(seed):
    X, y, w, signs = _invariance_instance(seed)
    base = _fit(ICEClassifier(device="cpu", monotonic_cst=signs), X, y, w)
    moved = X.copy()
    moved[:, 0] = moved[:, 0] * 2.0**5 + (8.0 if seed % 2 else 0.0)  # exact in float64
    if X.shape[1] > 2:
        moved[:, 2] *= 2.0**-3
    clf = _fit(ICEClassifier(device="cpu", monotonic_cst=signs), moved, y, w)
    _same_answer(base, clf)
    _assert_has_signs(clf, signs)
    assert verify(clf, moved, y, w).ok


@pytest.mark.parametrize("seed", range(4))
def test_flip_feature_with_its_constraint(seed):
    X, y, w, signs = _invariance_instance(seed)
    base = _fit(ICEClassifier(device="cpu", monotonic_cst=signs), X, y, w)
    flipped, fsigns = X.copy(), signs.copy()
    flipped[:, 0], fsigns[0] = -flipped[:, 0], -fsigns[0]
    clf = _fit(ICEClassifier(device="cpu", monotonic_cst=fsigns), flipped, y, w)
    _same_answer(base, clf)
    _assert_has_signs(clf, fsigns)
    assert verify(clf, flipped, y, w).ok


@pytest.mark.parametrize("seed", range(4))
def test_permute_features_with_constraint(seed):
    X, y, w, signs = _invariance_instance(seed)
    base = _fit(ICEClassifier(device="cpu", monotonic_cst=signs), X, y, w)
    perm = np.random.default_rng(seed).permutation(X.shape[1])[::-1].copy()
    clf = _fit(ICEClassifier(device="cpu", monotonic_cst=signs[perm]), X[:, perm], y, w)
    _same_answer(base, clf)
    _assert_has_signs(clf, signs[perm])
    assert verify(clf, X[:, perm], y, w).ok


# -- 4. encodings and their errors ------------------------------------------------------------


def _frame(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(10, 3))
    y = (X[:, 0] - X[:, 2] + 0.8 * rng.normal(size=10) > 0).astype(int)
    return pd.DataFrame(X, columns=["a", "b", "c"]), y


@pytest.mark.parametrize("seed", range(2))
def test_dict_by_name_equals_array(seed):
    df, y = _frame(seed)
    by_name = _fit(ICEClassifier(device="cpu", monotonic_cst={"c": 1, "a": -1}), df, y)
    by_array = _fit(ICEClassifier(device="cpu", monotonic_cst=[-1, 0, 1]), df.to_numpy(), y)
    assert by_name.training_errors_ == by_array.training_errors_
    assert by_name.is_optimal_ and by_array.is_optimal_
    np.testing.assert_array_equal(by_name.coef_, by_array.coef_)
    np.testing.assert_array_equal(by_name.intercept_, by_array.intercept_)
    assert by_name.certificate_.model_class == by_array.certificate_.model_class == (
        AFFINE + " with w[j] >= 0 for j in [2] and w[j] <= 0 for j in [0]")
    _assert_has_signs(by_name, [-1, 0, 1])
    assert verify(by_name, df, y).ok
    # an empty dict asks nothing: the ordinary fit
    plain = _fit(ICEClassifier(device="cpu"), df, y)
    empty = _fit(ICEClassifier(device="cpu", monotonic_cst={}), df, y)
    assert empty.training_errors_ == plain.training_errors_
    assert empty.certificate_.model_class == AFFINE


@pytest.mark.parametrize("cst", [
    {"a": 1, "zzz": -1},  # unknown name
    [1, 2, 0],  # outside -1/0/1
    [1, 0.5, 0],
    [1, -1],  # too short
    [1, -1, 0, 0],  # too long
])
def test_bad_constraint_raises(cst):
    df, y = _frame()
    with pytest.raises(ValueError):
        ICEClassifier(device="cpu", monotonic_cst=cst).fit(df, y)


def test_dict_needs_feature_names():
    df, y = _frame()
    with pytest.raises(ValueError):
        ICEClassifier(device="cpu", monotonic_cst={"a": 1}).fit(df.to_numpy(), y)


# -- 5. model class and verify ----------------------------------------------------------------


def _fitted(signs=(1, 0, -1, 1)):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(9, 4))
    X[:, 1] = 0.0  # a constant feature: its coefficient does not move a prediction
    y = (X @ np.array([1.0, 0.0, -1.0, 0.5]) + 0.5 * rng.normal(size=9) > 0).astype(int)
    clf = _fit(ICEClassifier(device="cpu", monotonic_cst=list(signs)), X, y)
    return clf, X, y


def test_model_class_text():
    clf, X, y = _fitted()
    assert clf.certificate_.model_class == (
        AFFINE + " with w[j] >= 0 for j in [0, 3] and w[j] <= 0 for j in [2]")
    clf1, _, _ = _fitted((0, 0, 1, 0))
    assert clf1.certificate_.model_class == AFFINE + " with w[j] >= 0 for j in [2]"
    clf2, _, _ = _fitted((0, -1, 0, 0))
    assert clf2.certificate_.model_class == AFFINE + " with w[j] <= 0 for j in [1]"
    report = verify(clf, X, y)
    assert report.ok, str(report)
    assert _check(report, "model class").passed
    assert _check(report, "model in its class").passed


def test_verify_rejects_wrong_sign_alone():
    """A wrong sign on a coefficient that moves no prediction: only the sign check fails."""
    clf, X, y = _fitted((1, 1, -1, 1))
    assert clf.is_optimal_
    bad = pickle.loads(pickle.dumps(clf))
    bad.coef_ = bad.coef_.copy()
    bad.coef_[0, 1] = -1.0  # feature 1 is constant 0 and must be >= 0
    np.testing.assert_array_equal(bad.predict(X), clf.predict(X))
    report = verify(bad, X, y)
    assert not report.ok, str(report)
    failed = [c.name for c in report.checks if not c.passed]
    assert failed == ["model in its class"], str(report)
    assert "[1]" in _check(report, "model in its class").detail
    assert verify(clf, X, y).ok  # the original untouched


def test_report_truthiness_is_ok():
    clf, X, y = _fitted((1, 1, -1, 1))
    bad = pickle.loads(pickle.dumps(clf))
    bad.coef_ = bad.coef_.copy()
    bad.coef_[0, 1] = -1.0
    report = verify(bad, X, y)
    assert not report.ok
    assert bool(verify(clf, X, y))
    assert not bool(report)


def test_verify_rejects_tampered_coef():
    clf, X, y = _fitted()
    j = 0  # asked >= 0
    bad = pickle.loads(pickle.dumps(clf))
    bad.coef_ = bad.coef_.copy()
    bad.coef_[0, j] = -abs(bad.coef_[0, j]) - 1.0
    report = verify(bad, X, y)
    assert not report.ok
    assert not _check(report, "model in its class").passed


def test_verify_rejects_unconstrained_model_class():
    clf, X, y = _fitted()
    cert = clf.certificate_
    assert dataclasses.is_dataclass(cert)
    forged = dataclasses.replace(cert, model_class=AFFINE)
    report = verify(clf, X, y, certificate=forged)
    assert not report.ok
    assert not _check(report, "model class").passed
    # as a dict (the JSON form) too
    report = verify(clf, X, y, certificate=cert.to_dict() | {"model_class": AFFINE})
    assert not report.ok


def test_verify_rejects_other_signs_after_fit():
    """The certificate proves the optimum under the signs of the fit: a model asked for
    other signs (or none) afterwards does not match it."""
    clf, X, y = _fitted()
    other = pickle.loads(pickle.dumps(clf)).set_params(monotonic_cst=[1, 0, 0, 1])
    assert not verify(other, X, y).ok
    unsigned = pickle.loads(pickle.dumps(clf)).set_params(monotonic_cst=None)
    assert not verify(unsigned, X, y).ok
    # and an unconstrained fit's certificate claims nothing about signs
    plain = _fit(ICEClassifier(device="cpu"), X, y)
    forged = dataclasses.replace(plain.certificate_, model_class=clf.certificate_.model_class)
    assert not verify(plain, X, y, certificate=forged).ok


# -- 6. beyond the exact range ----------------------------------------------------------------


@pytest.fixture(scope="module")
def cryotherapy():
    X, y = load_dataset("cryotherapy", return_X_y=True)
    assert X.shape[1] >= 5
    plain = _fit(ICEClassifier(device="cpu", time_limit=10), X, y)
    assert plain.is_optimal_
    return X, y, plain


ALTERNATING = np.array([1, -1, 1, -1, 1, -1])


@pytest.fixture(scope="module")
def anytime_fits(cryotherapy):
    """Fits of one sign pattern on cryotherapy (6 features) under a short and a longer
    time limit, with the warnings each raised."""
    X, y, _ = cryotherapy
    fits = {}
    for limit in (0.2, 3.0):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf = ICEClassifier(device="cpu", monotonic_cst=ALTERNATING,
                                time_limit=limit).fit(X, y)
        fits[limit] = clf, [c.category for c in caught]
    return fits


@pytest.mark.parametrize("limit", [0.2, 3.0])
def test_anytime_beyond_exact_range(cryotherapy, anytime_fits, limit):
    X, y, plain = cryotherapy
    clf, categories = anytime_fits[limit]
    convergence = [c for c in categories if issubclass(c, ConvergenceWarning)]
    assert bool(convergence) == (not clf.is_optimal_)
    _assert_has_signs(clf, ALTERNATING)
    assert 0 <= clf.lower_bound_ <= clf.training_errors_
    assert clf.is_optimal_ == (clf.lower_bound_ == clf.training_errors_)
    assert _errors(clf, X, y) == clf.training_errors_
    # every rule with the signs is an affine rule: never fewer errors than the optimum
    assert clf.training_errors_ >= plain.training_errors_
    stages = [row.stage for row in clf.fit_trace_]
    assert stages and set(stages) <= STAGES and stages[0] == "incumbents"
    assert clf.certificate_.model_class == (
        AFFINE + " with w[j] >= 0 for j in [0, 2, 4] and w[j] <= 0 for j in [1, 3, 5]")
    report = verify(clf, X, y)
    assert report.ok, str(report)


def test_anytime_bounds_bracket_the_optimum(anytime_fits):
    """The short fit's bound and rule bracket whatever the longer fit proves."""
    short, _ = anytime_fits[0.2]
    long, _ = anytime_fits[3.0]
    assert long.lower_bound_ <= short.training_errors_
    assert short.lower_bound_ <= long.training_errors_
    if long.is_optimal_:
        assert short.lower_bound_ <= long.training_errors_ <= short.training_errors_


def test_unconstrained_optimum_with_the_signs_is_proven(cryotherapy):
    """Beyond the exact range, where the unconstrained optimum has the signs asked for, it
    is the constrained optimum, and the fit proves it."""
    X, y, plain = cryotherapy
    signs = np.sign(plain.coef_[0]).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = ICEClassifier(device="cpu", monotonic_cst=signs, time_limit=5).fit(X, y)
    assert clf.is_optimal_
    assert clf.training_errors_ == clf.lower_bound_ == plain.training_errors_
    _assert_has_signs(clf, signs)
    assert set(row.stage for row in clf.fit_trace_) <= STAGES
    assert verify(clf, X, y).ok


# -- 7. scikit-learn conventions --------------------------------------------------------------


def test_clone_and_get_params():
    clf = ICEClassifier(monotonic_cst=[1, -1], time_limit=5)
    assert clf.get_params()["monotonic_cst"] == [1, -1]
    twin = clone(clf)
    assert twin.get_params()["monotonic_cst"] == [1, -1]
    assert twin.get_params() == clf.get_params()
    assert clone(ICEClassifier().set_params(monotonic_cst={"a": 1})).monotonic_cst == {"a": 1}


@pytest.mark.parametrize("as_", [list, tuple, np.array])
def test_accepts_list_tuple_array(as_):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(10, 2))
    y = (X[:, 0] - X[:, 1] > 0.3 * rng.normal(size=10)).astype(int)
    cst = as_([1, -1])
    clf = ICEClassifier(device="cpu", monotonic_cst=cst)
    _fit(clf, X, y)
    assert clf.monotonic_cst is cst  # fit does not touch the parameter
    assert clf.is_optimal_
    _assert_has_signs(clf, [1, -1])
    assert clf.certificate_.model_class == (
        AFFINE + " with w[j] >= 0 for j in [0] and w[j] <= 0 for j in [1]")
    assert verify(clf, X, y).ok
    reference = _fit(ICEClassifier(device="cpu", monotonic_cst=[1, -1]), X, y)
    assert clf.training_errors_ == reference.training_errors_
    assert clone(clf).fit(X, y).training_errors_ == clf.training_errors_


def test_max_features_not_below_the_dimension_is_allowed():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(9, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    y[0] = 1 - y[0]
    a = _fit(ICEClassifier(device="cpu", monotonic_cst=[1, 1], max_features=2), X, y)
    b = _fit(ICEClassifier(device="cpu", monotonic_cst=[1, 1]), X, y)
    assert a.training_errors_ == b.training_errors_ and a.is_optimal_
    assert verify(a, X, y).ok


# -- 8. rejections ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("k", [1, 2])
def test_few_features_with_signs_match_brute_force(k, seed):
    """max_features and monotonic_cst together: the least, over the subsets of k features,
    of the brute-force optimum with those features' signs; verify re-derives the k = 1
    scans with the signs and re-checks the subsets' IIS covers on their own signs."""
    rng = np.random.default_rng(100 + seed)
    n, d = 7, 3
    X = rng.integers(0, 3, size=(n, d)).astype(float) if seed % 2 else rng.normal(size=(n, d))
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    w = rng.integers(1, 4, n).astype(float)
    signs = rng.integers(-1, 2, d)
    signs[0] = signs[0] or 1
    clf = _fit(ICEClassifier(device="cpu", monotonic_cst=signs, max_features=k), X, y, w)
    optimum = min(brute_force_signed(X[:, list(S)], y, w, signs[list(S)])
                  for S in itertools.combinations(range(d), k))
    assert clf.is_optimal_
    assert clf.training_errors_ == pytest.approx(optimum, rel=1e-12, abs=1e-12)
    assert np.count_nonzero(clf.coef_) <= k
    _assert_has_signs(clf, signs)
    assert "at most" in clf.certificate_.model_class and "w[j]" in clf.certificate_.model_class
    assert verify(clf, X, y, sample_weight=w).ok


def test_single_feature_rules_with_signs_are_checked_in_full():
    """k = 1 with a sign: the first feature alone would separate the data downwards, which
    its sign forbids. verify re-derives each feature's signed scan: it accepts the true
    bound, not one raised by an error, nor a model class without the signs."""
    X = np.array([[0.0, 0.0], [1.0, 2.0], [2.0, 1.0], [3.0, 3.0]])
    y = np.array([1, 1, 0, 0])
    clf = _fit(ICEClassifier(device="cpu", monotonic_cst=[1, 0], max_features=1), X, y)
    # feature 0 upwards or constant: 2 errors; feature 1 either way: 1 error
    assert clf.training_errors_ == 1.0 and clf.is_optimal_ and clf.coef_[0, 0] == 0
    assert verify(clf, X, y).ok
    raised = clf.certificate_.to_dict()
    raised["bound"] = raised["value"] = 2.0
    assert not verify(clf, X, y, certificate=raised).ok
    unsigned = clf.certificate_.to_dict()
    unsigned["model_class"] = AFFINE + " using at most 1 of the 2 features"
    assert not verify(clf, X, y, certificate=unsigned).ok


@pytest.mark.parametrize("params", [
    {"method": "milp"},
    {"method": "iis_cover"},
])
def test_rejected_combinations(params):
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [3.0, 1.0]])
    y = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="monotonic_cst"):
        ICEClassifier(device="cpu", monotonic_cst=[1, -1], **params).fit(X, y)


def test_beyond_the_exact_range_the_milp_proposes_a_rule_with_the_signs():
    """300 points in 6 dimensions under a short budget: the enumeration cannot follow the
    IIS cover, so where the cover's first quarter does not prove the optimum the big-M MILP
    with the constraint rows proposes a rule and the cover goes on; every rule kept has the
    signs, and the certificate holds whatever stopped the fit."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 6))
    y = (X @ np.array([1.0, -1.0, 0.5, 0.0, 2.0, -0.5]) + rng.normal(size=300) > 0).astype(int)
    signs = np.array([1, -1, 1, 0, -1, 0])  # feature 4 asked against its direction
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = ICEClassifier(monotonic_cst=signs, time_limit=4).fit(X, y)
    stages = [row.stage for row in clf.fit_trace_]
    assert stages[:2] == ["incumbents", "IIS cover with sign constraints"]
    if clf.fit_trace_[1].stop != "proven":  # then the MILP, then the cover again
        assert stages[2:] == ["big-M MILP with sign constraints",
                              "IIS cover with sign constraints"]
    assert set(stages) <= STAGES
    _assert_has_signs(clf, signs)
    assert clf.lower_bound_ <= clf.training_errors_
    assert verify(clf, X, y).ok
