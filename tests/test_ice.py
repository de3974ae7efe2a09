"""ICEClassifier: exact optimum, realized by predict, on real and adversarial data."""

import pickle

import numpy as np
import pytest
from _helpers import brute_force_min01
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from exactclf import ICEClassifier
from exactclf._backend import gpu_available
from exactclf._base import merge_duplicates
from exactclf.datasets import load_caesarian, load_cryotherapy, load_haberman, load_voicepath


def _errors(clf, X, y, sample_weight=None):
    w = np.ones(len(y)) if sample_weight is None else sample_weight
    return float(w[clf.predict(X) != y].sum())


def test_voicepath_reproduces_the_published_optimum():
    X, y = load_voicepath(return_X_y=True)
    clf = ICEClassifier(device="cpu").fit(X, y)
    assert clf.training_errors_ == 19 == _errors(clf, X, y)  # ICE paper, Table 1
    assert clf.is_optimal_ and clf.lower_bound_ == 19
    assert clf.method_ == "exact" and clf.n_candidates_ == clf.n_candidates_total_


def test_haberman_reproduces_the_published_optimum():
    X, y = load_haberman(return_X_y=True)
    clf = ICEClassifier(device="cpu", n_jobs=2).fit(X, y)
    assert clf.training_errors_ == 66 == _errors(clf, X, y)
    assert clf.is_optimal_


@pytest.mark.slow
@pytest.mark.parametrize("load, optimum", [(load_caesarian, 18), (load_cryotherapy, 4)])
def test_higher_dimensional_datasets_reproduce_the_published_optima(load, optimum):
    X, y = load(return_X_y=True)
    clf = ICEClassifier(device="cpu", n_jobs=2).fit(X, y)
    assert clf.training_errors_ == optimum == _errors(clf, X, y)
    assert clf.is_optimal_


@pytest.mark.parametrize("seed", range(8))
def test_matches_brute_force_with_duplicates_and_weights(seed):
    rng = np.random.default_rng(seed)
    n, d = 9, int(rng.integers(1, 4))
    X = rng.integers(0, 3, size=(n, d)).astype(float) * 10.0 - 7.0  # integer grid, shifted
    X = np.vstack([X, X[:3]])  # duplicates, possibly with conflicting labels
    y = rng.choice(np.array(["no", "yes"]), size=len(X))
    w = rng.integers(1, 4, size=len(X)).astype(float)
    U, wpos, wneg, _ = merge_duplicates(X, y == "yes", w)
    clf = ICEClassifier(device="cpu").fit(X, y, sample_weight=w)
    assert clf.training_errors_ == brute_force_min01(U, wpos, wneg)
    assert clf.training_errors_ == _errors(clf, X, y, w)
    assert clf.is_optimal_


def test_more_features_than_samples_and_collinear_points():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 12))
    y = np.array([0, 1, 0, 1, 1])
    clf = ICEClassifier(device="cpu").fit(X, y)
    assert clf.training_errors_ == 0 == _errors(clf, X, y)  # n <= d + 1: separable
    t = np.arange(8.0)[:, None]
    X = np.hstack([t, 2 * t + 1, -t])  # all points on one line in 3-D
    y = np.array([0, 0, 1, 1, 0, 1, 1, 1])
    clf = ICEClassifier(device="cpu").fit(X, y)
    assert clf.training_errors_ == 1 == _errors(clf, X, y)


def test_sample_weight_equals_repetition_and_zero_weight_equals_removal():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] + X[:, 1] ** 2 + 0.3 * rng.normal(size=30) > 0.5).astype(int)
    w = rng.integers(0, 3, size=30)
    a = ICEClassifier(device="cpu").fit(X, y, sample_weight=w)
    b = ICEClassifier(device="cpu").fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert a.training_errors_ == b.training_errors_
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6)


def test_invariant_to_label_names_and_feature_scaling():
    X, y = load_voicepath(return_X_y=True)
    X, y = X[::4], y[::4]
    a = ICEClassifier(device="cpu").fit(X, y)
    b = ICEClassifier(device="cpu").fit(X * [1e3, 1e-2] + 5.0, np.where(y == 1, "a", "b"))
    assert a.training_errors_ == b.training_errors_


def test_parallel_returns_the_same_model():
    X, y = load_voicepath(return_X_y=True)
    a = ICEClassifier(device="cpu").fit(X, y)
    b = ICEClassifier(device="cpu", n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


def test_budget_returns_best_so_far_with_a_warning():
    X, y = load_haberman(return_X_y=True)
    clf = ICEClassifier(device="cpu", max_candidates=1000, upper_bound="surrogate")
    with pytest.warns(ConvergenceWarning, match="optimality is not proven"):
        clf.fit(X, y)
    assert not clf.is_optimal_ and clf.stop_reason_ == "max_candidates"
    assert clf.n_candidates_ == 1000
    assert clf.lower_bound_ <= 66 <= clf.training_errors_ == _errors(clf, X, y)
    assert clf.training_errors_ <= clf.upper_bound_
    with pytest.warns(ConvergenceWarning):
        tl = ICEClassifier(device="cpu", time_limit=1e-3).fit(X, y)
    assert tl.stop_reason_ == "time_limit" and not tl.is_optimal_


def test_search_far_too_large_is_refused_before_starting(monkeypatch):
    monkeypatch.setattr("exactclf.linear._ice._MILP_SECONDS", 2.0)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 8))
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    with pytest.raises(ValueError, match="days here.*time_limit"):
        ICEClassifier(method="exact").fit(X, y)
    with pytest.warns(UserWarning, match="falls back to method='milp'"):
        clf = ICEClassifier(method="auto", time_limit=None).fit(X, y)
    assert clf.method_ == "milp" and not clf.is_optimal_
    assert clf.training_errors_ == _errors(clf, X, y)


def test_bad_input_gets_clear_errors():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    with pytest.raises(ValueError, match="2 classes"):
        ICEClassifier().fit(X, [1, 1, 1])
    with pytest.raises(ValueError, match="Only binary classification"):
        ICEClassifier().fit(X, [0, 1, 2])
    with pytest.raises(ValueError, match="NaN"):
        ICEClassifier().fit(np.array([[0.0, np.nan], [1.0, 0.0]]), [0, 1])
    with pytest.raises(ValueError, match="inf"):
        ICEClassifier().fit(np.array([[0.0, np.inf], [1.0, 0.0]]), [0, 1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ICEClassifier().fit(X, [0, 1])
    with pytest.raises(ValueError, match="(?i)negative"):
        ICEClassifier().fit(X, [0, 1, 1], sample_weight=[1, -1, 1])


@pytest.mark.skipif(gpu_available(), reason="checks the error raised without a usable GPU")
def test_gpu_request_without_gpu_names_the_extra():
    X, y = np.array([[0.0], [1.0]]), np.array([0, 1])
    with pytest.raises(RuntimeError, match=r"pip install exactclf\[gpu\]"):
        ICEClassifier(device="gpu").fit(X, y)


def test_works_in_pipelines_grid_search_ovr_and_pickles():
    X, y = load_voicepath(return_X_y=True)
    X, y = X[::8], y[::8]
    pipe = make_pipeline(StandardScaler(), ICEClassifier(device="cpu"))
    grid = GridSearchCV(pipe, {"iceclassifier__upper_bound": ["surrogate", "milp"]}, cv=2)
    grid.fit(X, y)
    assert grid.best_score_ > 0.8
    rng = np.random.default_rng(0)
    X3 = rng.normal(size=(30, 2))
    y3 = np.argmax(X3 @ rng.normal(size=(2, 3)), axis=1)
    ovr = OneVsRestClassifier(ICEClassifier(device="cpu")).fit(X3, y3)
    assert (ovr.predict(X3) == y3).mean() > 0.8
    clf = ICEClassifier(device="cpu").fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))
    assert clone(clf).get_params() == clf.get_params()
