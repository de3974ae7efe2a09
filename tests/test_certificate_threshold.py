"""Certificates of the threshold networks (a Lasso dual point) and of NGDClassifier (none).

Every certificate produced must verify with :func:`exactclf.verify`, survive a JSON round
trip, and be rejected when tampered with: other labels or data, a perturbed dual point, a
dual point feasible only for a dictionary missing one pattern, a claimed objective below the
network's, an optimality claim over a sampled dictionary. The checker's own exact
enumeration of arrangement patterns is compared with the package's enumerator.
"""

import base64
import json
import math
import warnings
from dataclasses import replace

import numpy as np
import pytest
from _helpers import assert_verifies
from sklearn.exceptions import ConvergenceWarning

from exactclf import datasets, verify
from exactclf._certificate import StopReason
from exactclf._verification import _lasso as lasso_checker
from exactclf._verification._lasso import linear_dichotomies
from exactclf.ngd import NGDClassifier
from exactclf.threshold import (
    ThresholdNetLasso,
    ThresholdNetLassoCV,
    ThresholdNetLassoRegressor,
    ThresholdNetLassoRegressorCV,
    _solvers,
)
from exactclf.threshold._arrangements import exact_patterns
from exactclf.threshold._solvers import solve_lasso


def _xor(n=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    return X, (X[:, 0] * X[:, 1] > 0).astype(int)


def _grid(seed=1):
    """Integer points: collinear triples, duplicates (conflicting labels among them)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (14, 2)).astype(float)
    y = rng.integers(0, 2, 14)
    y[:2] = [0, 1]
    return X, y


def _failed(report):
    return {c.name for c in report.checks if not c.passed}


# -- the certificates verify ---------------------------------------------------------------
@pytest.mark.parametrize("name", ["haberman", "caesarian", "cryotherapy", "voicepath"])
def test_bundled_datasets_verify(name):
    X, y = datasets.load_dataset(name, return_X_y=True)
    clf = ThresholdNetLasso(beta=1.0, n_arrangements=100, random_state=0).fit(X, y)
    c = clf.certificate_
    assert clf.arrangements_ == "sample"
    # a sample of patterns proves optimality over that sample only, and says so
    assert not c.is_optimal and c.stop_reason == StopReason.SAMPLED_PATTERNS
    assert "sampled arrangement patterns only" in c.model_class
    assert c.witness.data["dictionary"] == "listed"
    report = assert_verifies(clf, X, y)
    assert "network in the dictionary" in {ch.name for ch in report.checks}
    # the views keep their meaning
    assert clf.objective_ == c.value and clf.dual_gap_ == c.value - c.bound >= 0


CASES = [
    ("exact squared", lambda: ThresholdNetLasso(beta=0.05, arrangements="exact"), _xor),
    # liblinear: skglm's first call compiles for seconds
    ("exact logistic", lambda: ThresholdNetLasso(beta=0.05, arrangements="exact",
                                                 loss="logistic", solver="sklearn",
                                                 tol=1e-7), _xor),
    ("exact hinge", lambda: ThresholdNetLasso(beta=0.05, arrangements="exact",
                                              loss="hinge"), _xor),
    ("degenerate", lambda: ThresholdNetLasso(beta=0.1, arrangements="exact"), _grid),
    ("degenerate hinge", lambda: ThresholdNetLasso(beta=0.1, arrangements="exact",
                                                   loss="hinge"), _grid),
    ("deep", lambda: ThresholdNetLasso(beta=0.05, hidden_layer_sizes=(3,),
                                       n_arrangements=40, random_state=0), _xor),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_small_instances_verify(case):
    _, make, data = case
    X, y = data()
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    w[3] = 0.0  # a weightless sample: its dual entry must be 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = make().fit(X, y, sample_weight=w)
    c = clf.certificate_
    report = assert_verifies(clf, X, y, w)
    if clf.hidden_layer_sizes is None:
        assert c.witness.data["dictionary"] == "all" and c.is_optimal
        assert any(ch.name == "dual feasibility" and "enumerated exactly" in ch.detail
                   for ch in report.checks)
        # is_optimal and rtol agree with tol (gap relative to the zero network's loss)
        assert c.value - c.bound <= c.rtol * c.value
    else:
        assert not c.is_optimal and "last-layer patterns only" in c.model_class


def test_closed_form_multiclass_and_regressors_verify():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((4, 4))  # affinely independent: the closed form
    y4 = rng.standard_normal(4)
    reg = ThresholdNetLassoRegressor(beta=0.1).fit(X, y4)
    assert reg.arrangements_ == "closed_form" and reg.certificate_.is_optimal
    assert "patterns" not in reg.certificate_.witness.data
    assert_verifies(reg, X, y4)
    X, _ = _xor(10, seed=2)
    Y = np.column_stack([X[:, 0] > 0, X[:, 1]]).astype(float)
    multi = ThresholdNetLassoRegressor(beta=0.05, arrangements="exact").fit(X, Y)
    assert multi.certificate_.is_optimal
    assert_verifies(multi, X, Y)
    labels = np.array(["a", "b", "c"])[np.arange(10) % 3]
    clf = ThresholdNetLasso(beta=0.05, arrangements="exact").fit(X, labels)
    assert np.asarray(clf.certificate_.witness.data["theta"]).shape == (10, 3)
    assert_verifies(clf, X, labels)


def test_cv_variants_verify():
    X, y = _xor(20, seed=4)
    clf = ThresholdNetLassoCV(betas=3, cv=3, arrangements="exact").fit(X, y)
    assert clf.certificate_.witness.data["beta"] == clf.beta_
    assert f"beta={clf.beta_:g}" in clf.certificate_.model_class
    assert_verifies(clf, X, y)
    t = X[:, 0] - X[:, 1] ** 2
    reg = ThresholdNetLassoRegressorCV(betas=3, cv=3, n_arrangements=30,
                                       arrangements="sample", random_state=0).fit(X, t)
    assert_verifies(reg, X, t)


# -- the checker's enumeration --------------------------------------------------------------
@pytest.mark.parametrize("kind", ["random 2d", "grid", "collinear", "random 3d", "one point"])
def test_checker_enumerates_the_arrangement(kind):
    """The checker's exact enumeration (integer arithmetic) finds the same patterns as the
    package's dichotomy enumerator, on general and degenerate points."""
    rng = np.random.default_rng(7)
    X = {"random 2d": rng.standard_normal((9, 2)),
         "grid": np.unique(rng.integers(0, 4, (14, 2)), axis=0).astype(float),
         "collinear": np.outer(np.arange(6.0), [1.0, 2.0]) + np.array([0.5, -1.0]),
         "random 3d": rng.standard_normal((8, 3)),
         "one point": np.zeros((1, 3))}[kind]
    mine = linear_dichotomies(X)
    theirs = exact_patterns(X).patterns
    as_set = lambda P: {c.tobytes() for c in np.packbits(P.T, axis=1)}  # noqa: E731
    assert as_set(mine) == as_set(theirs)
    assert mine.shape[1] == theirs.shape[1]
    # a budget of no hyperplanes: only a single point (no hyperplane needed) is enumerated
    assert (linear_dichotomies(X, budget=0) is None) == (len(X) > 1)


def test_checker_beyond_its_budget_says_what_it_did_not_check(monkeypatch):
    X, y = _xor(12, seed=0)
    clf = ThresholdNetLasso(beta=0.05, arrangements="exact").fit(X, y)
    monkeypatch.setattr(lasso_checker, "ENUMERATION_BUDGET", 0)
    report = verify(clf, X, y)
    assert report.ok and "beyond the checker's enumeration budget" in report.not_checked[0]
    theta = np.asarray(clf.certificate_.witness.data["theta"])
    report = verify(clf, X, y, certificate=_tampered(clf, theta=(1.01 * theta).tolist()))
    assert "dual feasibility" in _failed(report)


# -- tampering -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def exact_fit():
    X, y = _xor(12, seed=0)
    return ThresholdNetLasso(beta=0.05, arrangements="exact").fit(X, y), X, y


def test_other_labels_or_data_are_rejected(exact_fit):
    clf, X, y = exact_fit
    assert not verify(clf, X, 1 - y).ok
    assert not verify(clf, X + 1e-9, y).ok
    assert not verify(clf, *_xor(12, seed=1)).ok
    assert not verify(clf, X, y, np.full(len(y), 2.0)).ok


def _tampered(clf, **changes):
    """The certificate as a dict with ``changes`` in its witness data (``value`` etc. at
    the top level with a ``cert_`` prefix)."""
    d = json.loads(clf.certificate_.to_json())
    for key, val in changes.items():
        if key.startswith("cert_"):
            d[key[5:]] = val
        else:
            d["witness"]["data"][key] = val
    return d


def test_perturbed_dual_point_is_rejected(exact_fit):
    clf, X, y = exact_fit
    theta = np.asarray(clf.certificate_.witness.data["theta"])
    rng = np.random.default_rng(0)
    for bad in (theta * 1.01, theta + 1e-3 * rng.standard_normal(theta.shape)):
        report = verify(clf, X, y, certificate=_tampered(clf, theta=bad.tolist()))
        assert not report.ok and _failed(report) & {"dual feasibility", "witness proves the bound"}
    # a shrunk point is feasible but bounds less than the certificate claims
    report = verify(clf, X, y, certificate=_tampered(clf, theta=(0.5 * theta).tolist()))
    assert _failed(report) == {"witness proves the bound"}
    report = verify(clf, X, y, certificate=_tampered(clf, theta=theta[:-1].tolist()))
    assert not report.ok


def test_dual_point_missing_a_pattern_is_rejected(exact_fit):
    """A dual point optimal for the dictionary less one pattern the optimum uses bounds
    that smaller problem (a larger optimum): the checker's own enumeration finds the left
    out pattern's dual constraint violated."""
    clf, X, y = exact_fit
    D = linear_dichotomies(X).astype(float)
    t, s, beta = 2.0 * y - 1.0, np.ones(len(y)), clf.beta
    w, *_ = solve_lasso(D, t, beta, "squared", "ipm", s, tol=1e-10)
    drop = int(np.argmax(np.abs(w)))
    keep = np.arange(D.shape[1]) != drop
    _, _, primal, gap, ok, info = solve_lasso(D[:, keep], t, beta, "squared", "ipm", s,
                                              tol=1e-10, return_info=True)
    assert ok and primal - gap > clf.objective_ * (1 + 1e-6)  # the pattern mattered
    report = verify(clf, X, y, certificate=_tampered(clf, theta=info.dual[:, None].tolist()))
    assert "dual feasibility" in _failed(report)


def test_listed_dictionary_without_a_used_pattern_is_rejected():
    X, y = _xor(30, seed=3)
    clf = ThresholdNetLasso(beta=0.05, n_arrangements=60, arrangements="sample",
                            random_state=0).fit(X, y)
    assert verify(clf, X, y).ok
    H = clf.hidden_activations(X).astype(bool)
    used = H[:, (np.abs(clf.coef_).sum(axis=0) > 0) & H.any(axis=0)]
    d = json.loads(clf.certificate_.to_json())
    spec = d["witness"]["data"]["patterns"]
    rows, cols = spec["shape"]
    P = np.unpackbits(np.frombuffer(base64.b64decode(spec["packbits"]), np.uint8)
                      .reshape(cols, -1), axis=1, count=rows).T.astype(bool)
    gone = next(j for j in range(P.shape[1]) if (P[:, [j]] == used).all(axis=0).any())
    P = np.delete(P, gone, axis=1)
    spec.update(shape=list(P.shape),
                packbits=base64.b64encode(np.packbits(P.T, axis=1).tobytes()).decode())
    report = verify(clf, X, y, certificate=d)
    assert "network in the dictionary" in _failed(report)


def test_false_claims_are_rejected(exact_fit):
    clf, X, y = exact_fit
    c = clf.certificate_
    # an objective below the network's (and a bound to match)
    report = verify(clf, X, y, certificate=replace(c, value=0.9 * c.value,
                                                   bound=0.9 * c.bound))
    assert "value" in _failed(report)
    # a bound above what the dual point proves (a fit stopped far from its optimum)
    with pytest.warns(ConvergenceWarning):
        rough = ThresholdNetLasso(beta=0.05, arrangements="exact", solver="sklearn",
                                  max_iter=2, tol=1e-12).fit(X, y)
    assert rough.certificate_.gap > 0.01 and verify(rough, X, y).ok
    report = verify(rough, X, y, certificate=replace(rough.certificate_,
                                                     bound=rough.objective_))
    assert "witness proves the bound" in _failed(report)
    # another beta or loss than the model's
    assert "beta" in _failed(verify(clf, X, y, certificate=_tampered(clf, beta=0.5)))
    assert "loss" in _failed(verify(clf, X, y, certificate=_tampered(clf, loss="hinge")))
    # optimality over a sampled dictionary
    X2, y2 = _xor(30, seed=3)
    sampled = ThresholdNetLasso(beta=0.05, n_arrangements=60, arrangements="sample",
                                random_state=0).fit(X2, y2)
    report = verify(sampled, X2, y2, certificate=replace(sampled.certificate_,
                                                         is_optimal=True))
    assert "optimal over every network" in _failed(report)


# -- stop reasons, warnings, determinism -----------------------------------------------------
def test_gap_warnings_name_their_cause(monkeypatch):
    X, y = _xor(16, seed=5)
    with pytest.warns(ConvergenceWarning, match="increase max_iter"):
        clf = ThresholdNetLasso(beta=0.01, arrangements="exact", loss="logistic",
                                solver="sklearn", max_iter=1, tol=1e-12).fit(X, y)
    assert clf.certificate_.stop_reason == StopReason.MAX_ITER
    assert not clf.is_optimal_ and verify(clf, X, y).ok
    with pytest.warns(ConvergenceWarning, match="floating-point floor") as caught:
        clf = ThresholdNetLasso(beta=0.01, arrangements="exact", loss="hinge",
                                tol=1e-300).fit(X, y)
    assert "max_iter" not in str(caught[0].message)
    assert clf.certificate_.stop_reason == StopReason.NUMERICAL
    # HiGHS has no iteration budget: an inaccurate LP solution is its tolerances' doing
    highs = _solvers._solve_highs_hinge
    monkeypatch.setattr(_solvers, "_solve_highs_hinge",
                        lambda *a: (0.5 * highs(*a)[0], *highs(*a)[1:]))
    with pytest.warns(ConvergenceWarning, match="HiGHS") as caught:
        clf = ThresholdNetLasso(beta=0.01, arrangements="exact", loss="hinge").fit(X, y)
    assert "max_iter" not in str(caught[0].message)
    assert clf.certificate_.stop_reason == StopReason.NUMERICAL
    assert verify(clf, X, y).ok


def test_liblinear_fits_are_repeatable():
    X, y = _xor(30, seed=6)
    gaps = {ThresholdNetLasso(beta=0.01, loss="logistic", solver="sklearn",
                              arrangements="exact").fit(X, y).dual_gap_ for _ in range(3)}
    assert len(gaps) == 1


# -- NGDClassifier ---------------------------------------------------------------------------
def test_ngd_certificate_claims_no_proof():
    X, y = _xor(40, seed=8)
    clf = NGDClassifier(hidden_layer_sizes=(5,), max_iter=30, random_state=0, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    c = clf.certificate_
    assert c.bound == -math.inf and not c.is_optimal and c.stop_reason == StopReason.NO_PROOF
    assert c.witness.kind == "none" and "no optimality proof" in c.witness.note
    assert "(5,)" in c.model_class and c.gap == math.inf
    # the value is the returned network's training objective, recomputed here
    p = clf.predict_proba(X)[np.arange(len(y)), y]
    penalty = 0.5 * clf.alpha * sum(float((W**2).sum()) for W in clf.coefs_)
    assert c.value == pytest.approx((-np.log(p).sum() + penalty) / len(y), rel=1e-9)
    assert_verifies(clf, X, y)
    assert not verify(clf, X, 1 - y).ok
    clf.partial_fit(X[:20], y[:20])  # the certificate of the last call, on its data
    assert clf.certificate_.n_samples == 20 and verify(clf, X[:20], y[:20]).ok
    assert not verify(clf, X, y).ok


def test_decimal_grid_claims_no_pattern_that_float_merged():
    """Iris petal sizes on their 0.1 grid: triples collinear in decimals are not exactly so
    in binary, so exact arithmetic finds patterns that the float64 enumeration merges. The
    fit must not claim every network then; its certificate verifies either way."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    X, y = X[:, 2:], (y == 2).astype(int)
    clf = ThresholdNetLasso(beta=0.1, arrangements="exact").fit(X, y)
    assert_verifies(clf, X, y)
    assert not clf.is_optimal_ and clf.certificate_.stop_reason == StopReason.NEAR_TIES
    # the same points rounded to whole millimetres are exactly collinear: proven
    Xi = np.round(10 * X)
    clf = ThresholdNetLasso(beta=0.1, arrangements="exact").fit(Xi, y)
    assert clf.is_optimal_
    assert_verifies(clf, Xi, y)
