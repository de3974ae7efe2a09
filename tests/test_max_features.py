"""ICEClassifier(max_features=k): the best affine rule on at most k features, proven, against
an independent brute force; its certificate, verify's checks of the constraint, budgets, the
scikit-learn conventions and the command line."""

import copy
import itertools
import math
import warnings

import joblib
import numpy as np
import pytest
from _helpers import brute_force_min01
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.estimator_checks import parametrize_with_checks
from test_common import EXPECTED_FAILED_CHECKS  # the ICEClassifier entry's

from exactclf import ICEClassifier, verify
from exactclf.cli import main
from exactclf.datasets import load_caesarian, load_haberman, load_rice_cammeo
from exactclf.linear import _feature_subsets


def _merged(X, y, w):
    """The distinct rows of ``X`` with the weight of each label there (the oracle's own)."""
    rows = {}
    for x, label, weight in zip(map(tuple, (X + 0.0).tolist()), y, w, strict=True):
        pos, neg = rows.get(x, (0.0, 0.0))
        rows[x] = (pos + weight, neg) if label == 1 else (pos, neg + weight)
    Z = np.array(list(rows), dtype=float)
    wpos, wneg = np.array(list(rows.values())).T
    return Z, wpos, wneg


def brute_force_at_most(X, y, w, k):
    """Least weighted errors of an affine rule on at most k features: over every k-subset,
    every labeling of its distinct points that an LP (margin 1) realizes."""
    d = X.shape[1]
    return min(brute_force_min01(*_merged(X[:, list(S)], y, w))
               for S in itertools.combinations(range(d), min(k, d)))


def _instance(seed):
    """10-12 samples, 3-4 features, of a kind that strains exactness."""
    rng = np.random.default_rng(seed)
    kind = ["gaussian", "grid", "collinear", "ties", "duplicates"][seed % 5]
    n, d = int(rng.integers(8, 11)), int(rng.integers(3, 5))
    if kind == "gaussian":
        X = rng.normal(size=(n, d))
    elif kind == "grid":  # many points share coordinates and hyperplanes
        X = rng.integers(0, 3, size=(n, d)).astype(float)
    elif kind == "collinear":  # every point on one line
        X = rng.integers(-3, 4, size=(n, 1)) @ rng.integers(1, 4, size=(1, d)) + 2.0
    elif kind == "ties":  # values repeat on every feature, not as whole rows
        X = rng.choice([-1.0, 0.0, 0.5, 1.0], size=(n, d))
    else:
        X = rng.normal(size=(n, d))
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    X = np.vstack([X, X[:2]])  # duplicates; with labels flipped below, conflicting
    y = np.r_[y, 1 - y[:2]] if kind == "duplicates" else np.r_[y, y[:2]]
    w = rng.integers(1, 4, len(y)).astype(float) if seed % 3 == 0 else None
    return X.astype(float), y, w


def _fit(clf, X, y, w=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return clf.fit(X, y, sample_weight=w)


def _errors(clf, X, y, w=None):
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    return math.fsum(w[clf.predict(X) != y].tolist())


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("k", [1, 2])
def test_matches_brute_force(seed, k):
    X, y, w = _instance(seed)
    balanced = seed % 4 == 1
    clf = _fit(ICEClassifier(max_features=k, device="cpu",
                             class_weight="balanced" if balanced else None), X, y, w)
    counted = np.ones(len(y)) if w is None else w
    if balanced:
        counted = counted * compute_sample_weight("balanced", y)
    optimum = brute_force_at_most(X, y, counted, k)
    assert clf.is_optimal_
    assert clf.training_errors_ == pytest.approx(optimum, rel=1e-12, abs=1e-12)
    assert clf.lower_bound_ == pytest.approx(optimum, rel=1e-12, abs=1e-12)
    assert clf.lower_bound_ <= clf.training_errors_
    assert _errors(clf, X, y, counted) == clf.training_errors_
    assert np.count_nonzero(clf.coef_) <= k and clf.coef_.shape == (1, X.shape[1])
    report = verify(clf, X, y, w)
    assert report.ok, str(report)
    if k == 1:  # every feature's optimum is re-derived: nothing rests on the search
        assert not report.not_checked, str(report)


def test_no_constraint_is_the_ordinary_fit():
    X, y = load_caesarian(return_X_y=True)
    plain = ICEClassifier(device="cpu").fit(X, y)
    for k in (X.shape[1], X.shape[1] + 3):
        clf = ICEClassifier(device="cpu", max_features=k).fit(X, y)
        assert clf.training_errors_ == plain.training_errors_ and clf.is_optimal_
        np.testing.assert_array_equal(clf.coef_, plain.coef_)
        assert clf.certificate_.model_class == plain.certificate_.model_class
        assert verify(clf, X, y).ok


def test_fewer_features_never_err_less():
    """The optima over at most 1, 2, 3 features decrease to the unconstrained one."""
    X, y = load_caesarian(return_X_y=True)
    errors = [ICEClassifier(device="cpu", max_features=k).fit(X, y).training_errors_
              for k in (1, 2, 3, None)]
    assert errors == sorted(errors, reverse=True) and errors[0] > errors[-1]


@pytest.mark.parametrize("k", [1, 2])
def test_invariant_to_feature_scales_and_order(k):
    rng = np.random.default_rng(7)
    X, y = load_haberman(return_X_y=True)
    X, y = X[::4], y[::4]
    base = ICEClassifier(device="cpu", max_features=k).fit(X, y)
    scale = np.array([1e-3, 7.0, 2.0**20])
    scaled = ICEClassifier(device="cpu", max_features=k).fit(X * scale, y)
    perm = rng.permutation(X.shape[1])
    permuted = ICEClassifier(device="cpu", max_features=k).fit(X[:, perm], y)
    assert base.is_optimal_ and scaled.is_optimal_ and permuted.is_optimal_
    assert base.training_errors_ == scaled.training_errors_ == permuted.training_errors_


def test_verify_rejects_a_model_outside_its_class_and_forged_bounds():
    X, y = load_caesarian(return_X_y=True)
    clf = ICEClassifier(device="cpu", max_features=2).fit(X, y)
    assert verify(clf, X, y).ok
    # one more nonzero coefficient, too small to change a prediction: the value holds, the
    # model is outside the certificate's class
    wider = copy.deepcopy(clf)
    unused = np.flatnonzero(wider.coef_[0] == 0)[0]
    wider.coef_[0, unused] = 1e-300
    assert np.array_equal(wider.predict(X), clf.predict(X))
    report = verify(wider, X, y, certificate=clf.certificate_)
    assert not report.ok
    assert [c.name for c in report.checks if not c.passed] == ["model in its class"]
    # the certificate of another constraint than the model's
    looser = copy.deepcopy(clf).set_params(max_features=3)
    assert not verify(looser, X, y, certificate=clf.certificate_).ok
    unconstrained = copy.deepcopy(clf).set_params(max_features=None)
    assert not verify(unconstrained, X, y, certificate=clf.certificate_).ok

    # a worse model claimed optimal: the subsets' bounds do not reach its errors
    worse = copy.deepcopy(clf)
    worse.coef_ = np.zeros_like(clf.coef_)
    worse.intercept_ = np.array([1.0])  # everything positive
    v = _errors(worse, X, y)
    assert v > clf.training_errors_
    forged = clf.certificate_.to_dict() | {"value": v, "bound": v, "is_optimal": True}
    report = verify(worse, X, y, certificate=forged)
    assert not report.ok and any(c.name == "witness proves the bound" and not c.passed
                                 for c in report.checks)
    # a subset's bound raised in the witness rests on its search: never "verified" unnoted
    d = clf.certificate_.to_dict()
    for entry in d["witness"]["data"]["subsets"]:
        entry["bound"] = v
    report = verify(worse, X, y, certificate=d | {"value": v, "bound": v, "is_optimal": True})
    assert report.not_checked or not report.ok


def test_subsets_proven_by_iis_covers_are_checked_in_full():
    """With method="iis_cover" every subset's bound has an exact witness: verify re-checks
    them all on their projections, and a forged multiplier or subset fails."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 4))
    y = (X[:, 0] + X[:, 1] + rng.normal(size=30) > 0).astype(int)
    clf = ICEClassifier(max_features=2, method="iis_cover", device="cpu").fit(X, y)
    assert clf.is_optimal_
    report = verify(clf, X, y)
    assert report.ok and not report.not_checked, str(report)
    d = clf.certificate_.to_dict()
    entries = d["witness"]["data"]["subsets"]
    assert {e["witness"]["kind"] for e in entries} == {"iis_cover"}
    best = next(e for e in entries if e["bound"] == clf.training_errors_)
    if clf.training_errors_ > 0:
        forged = copy.deepcopy(d)
        entry = next(e for e in forged["witness"]["data"]["subsets"]
                     if e["features"] == best["features"])
        entry["witness"]["data"]["iis"][0][0][2] += 1
        assert not verify(clf, X, y, certificate=forged).ok
    # one subset's IISs put forward for another: not IISs of that projection
    worst = max(entries, key=lambda e: e["bound"])
    swapped = copy.deepcopy(d)
    for e in swapped["witness"]["data"]["subsets"]:
        if e["features"] == best["features"]:
            e["witness"], e["bound"] = copy.deepcopy(worst["witness"]), worst["bound"]
    report = verify(clf, X, y, certificate=swapped)
    assert not report.ok
    assert "feature subsets" in [c.name for c in report.checks if not c.passed]


def test_verify_rejects_a_forged_single_feature_bound():
    X, y = load_haberman(return_X_y=True)
    clf = ICEClassifier(max_features=1).fit(X, y)
    report = verify(clf, X, y)
    assert report.ok and not report.not_checked
    d = clf.certificate_.to_dict()
    assert not verify(clf, X, y, certificate=d | {"bound": d["value"] + 1}).ok
    assert not verify(clf, X, y, certificate=d | {"value": d["value"] - 1}).ok
    bad = copy.deepcopy(d)
    bad["witness"]["data"]["subsets"] = [{"features": [0, 1], "bound": 1.0,
                                          "witness": {"kind": "none", "data": {}}}]
    assert not verify(clf, X, y, certificate=bad).ok  # two features in a 1-subset witness
    garbage = copy.deepcopy(d)
    garbage["witness"]["data"] = {"subsets": "x"}
    assert not verify(clf, X, y, certificate=garbage).ok


def test_time_limit_returns_a_bounded_model_and_warns():
    X, y = load_rice_cammeo(return_X_y=True)  # 3810 points: no subset is proven in 2 s
    clf = ICEClassifier(max_features=2, time_limit=2, device="cpu", n_jobs=1)
    with pytest.warns(ConvergenceWarning, match="max_features=2"):
        clf.fit(X, y)
    assert clf.fit_time_ < 2 + 10
    assert clf.lower_bound_ <= clf.training_errors_ == _errors(clf, X, y)
    assert np.count_nonzero(clf.coef_) <= 2
    assert not clf.is_optimal_ and clf.stop_reason_ == "time_limit"
    assert [r.stage for r in clf.fit_trace_][0] == "single-feature thresholds"
    assert all(r.stage.startswith("subset (") for r in clf.fit_trace_[1:])
    report = verify(clf, X, y)
    assert report.ok, str(report)


def test_ctrl_c_between_subsets_returns_the_best_so_far(monkeypatch):
    X, y = load_caesarian(return_X_y=True)
    calls = []
    sweep = _feature_subsets.best_line

    def interrupting_sweep(*args):  # the subsets' searches on two features
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return sweep(*args)

    monkeypatch.setattr(_feature_subsets, "best_line", interrupting_sweep)
    clf = ICEClassifier(max_features=2, device="cpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X, y)
    assert any(issubclass(w.category, RuntimeWarning) for w in caught)
    assert len(calls) == 2 and clf.stop_reason_ == "interrupted" and not clf.is_optimal_
    assert clf.lower_bound_ <= clf.training_errors_ == _errors(clf, X, y)
    assert verify(clf, X, y).ok


def test_fit_trace_has_a_row_per_subset_searched_and_verbose_goes_to_stderr(capsys):
    X, y = load_caesarian(return_X_y=True)
    clf = ICEClassifier(max_features=2, device="cpu", verbose=1).fit(X, y)
    captured = capsys.readouterr()
    assert captured.out == "" and "subset (" in captured.err
    stages = [r.stage for r in clf.fit_trace_]
    searched = [s for s in stages if s.startswith("subset (")]
    assert len(searched) == len(set(searched)) > 0
    assert all(r.stop == "proven" for r in clf.fit_trace_ if r.stage in searched)
    # the subsets not searched were ruled out (the bound's method counts them)
    ruled_out = math.comb(5, 2) - len(searched)
    assert f", {ruled_out} ruled out by their conflicting duplicates" in clf.lower_bound_method_


@parametrize_with_checks(
    [ICEClassifier(max_features=1, max_candidates=20000, device="cpu")],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS["ICEClassifier"])
def test_sklearn_compatible_with_max_features(estimator, check):
    check(estimator)


OVERLAP = ["1,1,7,a", "2,1,3,a", "1,2,5,a", "3,3,1,b", "5,5,2,b", "6,5,9,b", "5,6,4,b",
           "3,3,6,a", "2.5,2.5,8,b"]


def test_cli_max_features(tmp_path, capsys):
    path = tmp_path / "data.csv"
    path.write_text("\n".join(["x,z,noise,label", *OVERLAP]) + "\n")
    out = tmp_path / "m.joblib"
    assert main(["fit", str(path), "--target", "label", "--model", "ice",
                 "--max-features", "1", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    model = joblib.load(out)
    assert model.max_features == 1 and np.count_nonzero(model.coef_) == 1
    rule = next(line for line in text.splitlines() if line.startswith("predict"))
    # the printed rule, evaluated as printed, makes the certificate's errors
    X = np.array([[float(v) for v in row.split(",")[:3]] for row in OVERLAP])
    y = np.array([row.split(",")[3] for row in OVERLAP])
    expr = rule.split(" if ")[1].split("> 0")[0]
    assert sum(name in expr for name in ("*x", "*z", "*noise")) == 1
    for j, name in enumerate(("x", "z", "noise")):
        expr = expr.replace(f"*{name}", f"*X[:, {j}]")
    pred = np.where(eval(expr, {"X": X}) > 0, model.classes_[1], model.classes_[0])
    assert (pred != y).sum() == model.certificate_.value
    assert "proven optimal" in text and "at most 1 of the 3 features" in text
    assert main(["verify", str(out), str(path), "--target", "label"]) == 0


@pytest.mark.parametrize("value, model", [("0", "ice"), ("-1", "ice"), ("1.5", "ice"),
                                          ("two", "ice"), ("1", "mrc")])
def test_cli_refuses_a_bad_max_features(tmp_path, capsys, value, model):
    path = tmp_path / "data.csv"
    path.write_text("\n".join(["x,z,noise,label", *OVERLAP]) + "\n")
    assert main(["fit", str(path), "--target", "label", "--model", model,
                 f"--max-features={value}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("exactclf fit: error:") and "max-features" in err
    assert not (tmp_path / f"data.{model}.joblib").exists()
