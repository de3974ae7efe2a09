"""ICEClassifier: exact optimum, realized by predict, on real and adversarial data."""

import pickle
import warnings

import numpy as np
import pytest
from _helpers import assert_verifies, brute_force_min01, random_instance, weighted_samples
from sklearn.base import clone
from sklearn.dummy import DummyClassifier
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted

from exactclf import ICEClassifier
from exactclf._backend import gpu_available
from exactclf._base import merge_duplicates
from exactclf._verification import verify
from exactclf._zero_one._min01 import solve_min01
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


def test_an_enumeration_budget_alone_is_reproducible():
    # the documented reproducible case of max_candidates: a count with nothing timed,
    # whatever the number of workers
    X, y = load_haberman(return_X_y=True)
    fits = []
    for n_jobs in (1, 2, 1):
        clf = ICEClassifier(device="cpu", method="exact", upper_bound="surrogate",
                            max_candidates=3000, n_jobs=n_jobs)
        with pytest.warns(ConvergenceWarning):
            fits.append(clf.fit(X, y))
    for b in fits[1:]:
        np.testing.assert_array_equal(b.coef_, fits[0].coef_)
        np.testing.assert_array_equal(b.intercept_, fits[0].intercept_)
        assert b.training_errors_ == fits[0].training_errors_
        assert b.n_candidates_ == fits[0].n_candidates_ == 3000


def test_search_far_too_large_is_refused_before_starting(monkeypatch):
    monkeypatch.setattr("exactclf.linear._ice._MILP_SECONDS", 2.0)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 8))
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    with pytest.raises(ValueError, match="days here.*time_limit"):
        ICEClassifier(method="exact").fit(X, y)
    # auto: the IIS cover path for the MILP's default time, with a bound, and a warning
    with pytest.warns(ConvergenceWarning, match="within the 2 s that a fit without time_limit"):
        clf = ICEClassifier(method="auto", time_limit=None).fit(X, y)
    assert clf.method_ == "iis_cover" and not clf.is_optimal_
    assert clf.training_errors_ == _errors(clf, X, y)
    assert 0 < clf.lower_bound_ < clf.training_errors_
    assert clf.certificate_.fit_time < 30  # the 2 s given, not a search without end
    # a candidate budget does not bound the IIS cover: the same time cap holds
    with pytest.warns(ConvergenceWarning, match="within the 2 s"):
        capped = ICEClassifier(max_candidates=10).fit(X, y)
    assert capped.method_ == "iis_cover" and capped.certificate_.fit_time < 30


def test_default_fit_proves_in_high_dimension_without_a_budget():
    # 1e13 candidates: the enumeration could not finish in a day, the IIS cover proves the
    # optimum in well under the 30 s a fit without time_limit gets there
    from exactclf._experiments.ice_table1 import synthetic_instance

    X, y = synthetic_instance("synth100x12")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback, no warning
        clf = ICEClassifier().fit(X, y)
    assert clf.n_candidates_total_ > 1e12
    assert clf.method_ == "iis_cover" and clf.is_optimal_ and clf.training_errors_ == 3
    assert clf.training_errors_ == _errors(clf, X, y)
    assert not assert_verifies(clf, X, y).not_checked


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
    # the majority class already scores 0.93 here: the exact classifier must beat it
    assert grid.best_score_ > cross_val_score(DummyClassifier(), X, y, cv=2).mean()
    assert grid.best_estimator_[-1].training_errors_ == ICEClassifier().fit(X, y).training_errors_
    rng = np.random.default_rng(0)
    X3 = rng.normal(size=(30, 2))
    y3 = np.argmax(X3 @ rng.normal(size=(2, 3)), axis=1)
    ovr = OneVsRestClassifier(ICEClassifier(device="cpu")).fit(X3, y3)
    assert (ovr.predict(X3) == y3).mean() > 0.8
    clf = ICEClassifier(device="cpu").fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))
    assert clone(clf).get_params() == clf.get_params()


UNITS = {
    "offset one feature": lambda X: X + [1e10, 0.0],
    "offset all features": lambda X: X + 1e10,
    "timestamps": lambda X: 1.7e9 + 60.0 * X,
    "tiny": lambda X: X * 1e-200,
    "huge": lambda X: X * 1e200,
}


@pytest.mark.parametrize("units", UNITS)
def test_units_do_not_change_the_optimum(units):
    """A varying feature under an offset of 1e10 was dropped as constant (8 errors certified
    optimal where the optimum is 3); all features under offset or tiny scale crashed."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=30) > 0).astype(int)
    ref = ICEClassifier(device="cpu").fit(X, y)
    Xu = UNITS[units](X)
    clf = ICEClassifier(device="cpu").fit(Xu, y)
    assert ref.training_errors_ == 3 and ref.is_optimal_
    assert clf.training_errors_ == 3 == _errors(clf, Xu, y) and clf.is_optimal_


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("seed", range(3))
def test_units_on_integer_grids_match_brute_force(units, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(11, 2)).astype(float)
    y = rng.integers(0, 2, size=11)
    U, wpos, wneg, _ = merge_duplicates(X, y == 1, np.ones(11))
    expected = brute_force_min01(U, wpos, wneg)
    Xu = UNITS[units](X)
    clf = ICEClassifier(device="cpu").fit(Xu, y)
    assert clf.training_errors_ == expected == _errors(clf, Xu, y) and clf.is_optimal_


def test_values_beyond_float64_get_a_clear_error():
    X = np.array([[-1.7e308, 0.0], [1.7e308, 1.0], [1.7e308, 2.0]])
    with pytest.raises(ValueError, match="overflow float64"):
        ICEClassifier().fit(X, [0, 1, 0])


@pytest.mark.parametrize("case", ["identical rows", "one unique point", "zero weights"])
def test_a_single_point_gets_the_majority_model(case):
    X = np.full((5, 3), 2.0)
    y = np.array([0, 1, 1, 0, 1])
    w = None
    if case == "one unique point":
        X = np.vstack([X, [[2.0, 2.0, 2.0 + 1e-15]]])  # still one point: rounding level
        X[:, 0] += 1e10
        y = np.r_[y, 1]
    elif case == "zero weights":
        X[3:] = [[0.0, 1.0, 2.0], [5.0, 0.0, 0.0]]
        w = np.array([1.0, 1.0, 1.0, 0.0, 0.0])
    clf = ICEClassifier(device="cpu").fit(X, y, sample_weight=w)
    assert clf.is_optimal_ and clf.training_errors_ == (2.0 if w is None else 1.0)
    np.testing.assert_array_equal(clf.predict(X), np.ones(len(X), dtype=int))
    assert clf.training_errors_ == _errors(clf, X, y, w)


def test_failed_refit_leaves_the_estimator_unfitted():
    X, y = np.array([[0.0], [1.0], [2.0]]), np.array([0, 1, 1])
    clf = ICEClassifier(device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="Only binary"):
        clf.fit(X, [0, 1, 2])
    with pytest.raises(NotFittedError):
        check_is_fitted(clf)
    with pytest.raises(ValueError, match="NaN"):
        ICEClassifier(device="cpu").fit(X, y).fit(np.array([[np.nan], [1.0], [2.0]]), y)


def test_refusal_counts_the_cores_really_available(monkeypatch):
    """n_jobs above the core count must not shrink the time estimate (n_jobs=100 on 2 cores
    skipped the refusal); absurd n_jobs must neither hang nor start that many threads."""
    monkeypatch.setattr("exactclf._resources.usable_cores", lambda: 2)
    monkeypatch.setattr("exactclf.linear._ice._MILP_SECONDS", 2.0)

    def days(n_jobs):
        return ICEClassifier(n_jobs=n_jobs)._estimated_seconds(10**12) / 86400

    assert days(100) == days(10**12) == days(-1) == days(2) == days(1) / 2 > 1
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 8))
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    for n_jobs in (100, 10**12):
        with pytest.raises(ValueError, match="days here"):
            ICEClassifier(method="exact", n_jobs=n_jobs).fit(X, y)
    Xs, ys = load_voicepath(return_X_y=True)
    a = ICEClassifier(device="cpu", n_jobs=10**12).fit(Xs[::4], ys[::4])
    b = ICEClassifier(device="cpu").fit(Xs[::4], ys[::4])
    assert a.is_optimal_ and a.training_errors_ == b.training_errors_


def test_search_beyond_the_rank_range_is_refused_with_advice_that_works(monkeypatch):
    """A budget cannot make a search beyond the addressable ranks run: the refusal must not
    recommend one, and method='auto' with a budget runs the IIS cover instead (with the
    incumbents and the bound of the portfolio beyond the exact range), not the MILP alone."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 20))
    y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    with pytest.raises(ValueError, match="beyond the .* candidates the search can address") as e:
        ICEClassifier(method="exact", time_limit=1.0).fit(X, y)
    assert "time_limit=" not in str(e.value)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = ICEClassifier(time_limit=1.0).fit(X, y)
    assert not any("falls back" in str(w.message) for w in caught)
    assert clf.method_ == "iis_cover" and not clf.is_optimal_
    assert clf.training_errors_ == _errors(clf, X, y)
    assert clf.lower_bound_ <= clf.training_errors_


def _interrupt_highs_at_first_wait(monkeypatch):
    import highspy

    wait = highspy.Highs.wait
    calls = []

    def interrupted_wait(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return wait(self, *args, **kwargs)

    monkeypatch.setattr(highspy.Highs, "wait", interrupted_wait)
    return calls


@pytest.mark.parametrize("method", ["exact", "milp"])
def test_interrupt_during_the_milp_returns_the_best_model_so_far(monkeypatch, method):
    """Ctrl-C while HiGHS runs (the MILP incumbent of a large search, or method='milp') was
    ignored until its time limit, then raised with no model."""
    calls = _interrupt_highs_at_first_wait(monkeypatch)
    X, y = load_haberman(return_X_y=True)
    clf = ICEClassifier(device="cpu", method=method, upper_bound="milp")
    with pytest.warns(RuntimeWarning, match="interrupted"):
        clf.fit(X, y)
    assert calls, "HiGHS must be waited for in interruptible slices"
    assert clf.stop_reason_ == "interrupted" and not clf.is_optimal_
    assert clf.n_candidates_ == 0 and clf.training_errors_ == _errors(clf, X, y)
    assert clf.training_errors_ <= clf.upper_bound_ or method == "milp"


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("method", ["iis_cover", "exact"])
def test_iis_cover_and_enumeration_match_brute_force_on_degenerate_weighted_data(seed, method):
    rng = np.random.default_rng(100 + seed)
    n, d = 10, int(rng.integers(1, 5))
    X = rng.integers(0, 3, size=(n, d)).astype(float) * 1e3 + 1e10 * (seed % 2)  # grid, offset
    X = np.vstack([X, X[:4]])  # duplicates, possibly with conflicting labels
    y = rng.integers(0, 2, size=len(X))
    w = rng.integers(1, 4, size=len(X)).astype(float)
    U, wpos, wneg, _ = merge_duplicates(X, y == 1, w)
    clf = ICEClassifier(method=method, device="cpu").fit(X, y, sample_weight=w)
    assert clf.method_ == method
    assert clf.training_errors_ == brute_force_min01(U, wpos, wneg) == _errors(clf, X, y, w)
    assert clf.is_optimal_ and clf.lower_bound_ == clf.training_errors_ and clf.gap_ == 0


def _short_iis_runs(monkeypatch):
    """IIS cover runs cut to nothing: the IIS cover can never finish a proof."""
    from exactclf._zero_one._iis import IISCoverSolver

    run, calls = IISCoverSolver.run, []

    def short_run(self, time_limit=None, reserve=0.0):
        calls.append(time_limit)
        return run(self, 1e-9)

    monkeypatch.setattr(IISCoverSolver, "run", short_run)
    return calls


def test_auto_switches_from_the_iis_cover_to_the_enumeration_keeping_its_bound(monkeypatch):
    # the IIS cover first (as from D = 5), but it cannot finish: the enumeration, restarted
    # with doubling slices, completes the proof
    monkeypatch.setattr("exactclf._zero_one._portfolio._IIS_FIRST_DIM", 2)
    monkeypatch.setattr("exactclf._zero_one._portfolio._MIN_SLICE", 0.0)
    calls = _short_iis_runs(monkeypatch)
    X, y = load_voicepath(return_X_y=True)
    clf = ICEClassifier(device="cpu").fit(X, y)
    assert len(calls) >= 1 and calls[0] is not None  # a slice, not the whole budget
    assert clf.method_ == "exact" and clf.is_optimal_ and clf.training_errors_ == 19
    assert clf.lower_bound_method_ == "exhaustive search"
    # a budget stop of both paths keeps the best proven bound and reports the gap
    with pytest.warns(ConvergenceWarning, match="gap"):
        b = ICEClassifier(device="cpu", max_candidates=10, upper_bound="surrogate").fit(X, y)
    assert not b.is_optimal_ and b.lower_bound_ <= 19 <= b.training_errors_
    assert b.stop_reason_ == "max_candidates"
    assert b.gap_ == pytest.approx((b.training_errors_ - b.lower_bound_) / b.training_errors_)


def test_auto_switches_from_the_enumeration_to_the_iis_cover(monkeypatch):
    # the enumeration first (D < 5), but it cannot finish: the IIS cover proves the optimum
    from exactclf._zero_one import _portfolio

    solve_min01, calls = _portfolio.solve_min01, []

    def no_time(*args, **kwargs):
        calls.append(kwargs["time_limit"])
        kwargs["time_limit"] = 1e-9
        return solve_min01(*args, **kwargs)

    monkeypatch.setattr(_portfolio, "solve_min01", no_time)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=40) > 0).astype(int)
    clf = ICEClassifier(device="cpu").fit(X, y)
    assert calls and calls[0] is not None
    assert clf.method_ == "iis_cover" and clf.is_optimal_
    assert clf.lower_bound_method_ == "IIS cover"
    monkeypatch.setattr(_portfolio, "solve_min01", solve_min01)
    exact = ICEClassifier(device="cpu", method="exact").fit(X, y)
    assert clf.training_errors_ == exact.training_errors_ == _errors(clf, X, y)


def test_high_dimension_gives_the_milp_a_turn_for_incumbents(monkeypatch, capsys):
    """From _HIGH_DIM on, a cover that does not prove within its first turn hands a turn to
    the big-M MILP, whose plane becomes the incumbent: here the MILP turn returns the
    optimal labeling and the cover's runs are too short to find anything, so the fit must
    return the optimum, with a bound proven by other means (never the MILP's)."""
    from exactclf._zero_one import _portfolio

    monkeypatch.setattr(_portfolio, "_HIGH_DIM", 2)
    monkeypatch.setattr(_portfolio, "_MILP_TURN_SECONDS", 1e-3)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] + 0.8 * rng.normal(size=30) > 0).astype(int)
    exact = ICEClassifier(device="cpu", method="exact").fit(X, y)
    best_incumbent, turns = _portfolio.best_incumbent, []

    def optimal_milp(Z, wpos, wneg, *, surrogate=True, **kwargs):
        if surrogate:
            return best_incumbent(Z, wpos, wneg, surrogate=surrogate, **kwargs)
        turns.append(kwargs["milp_time_limit"])
        res = solve_min01(Z, wpos, wneg)
        return res.positive, res.value, "big-M MILP", False

    monkeypatch.setattr(_portfolio, "best_incumbent", optimal_milp)
    calls = _short_iis_runs(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = ICEClassifier(device="cpu", method="iis_cover", time_limit=5.0,
                            verbose=1).fit(X, y)
    assert "big-M MILP turn" in capsys.readouterr().err
    assert turns == [pytest.approx(1e-3)]
    assert calls[0] == pytest.approx(2e-3)  # the cover's first turn, cut short
    assert clf.training_errors_ == exact.training_errors_ == _errors(clf, X, y)
    assert clf.lower_bound_ <= exact.training_errors_
    assert clf.lower_bound_method_ != "big-M MILP"


@pytest.mark.parametrize("budget", [{"max_candidates": 500}, {"time_limit": 0.3}])
def test_budget_stopped_enumeration_reports_a_quick_bound(budget):
    """A stopped enumeration in low dimension had only the conflicting duplicates as bound
    (6 on Haberman, optimum 66)."""
    X, y = load_haberman(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="gap"):
        clf = ICEClassifier(device="cpu", method="exact", upper_bound="surrogate",
                            **budget).fit(X, y)
    assert not clf.is_optimal_ and clf.stop_reason_ in budget
    assert clf.lower_bound_method_ != "conflicting duplicates"
    assert 6 < clf.lower_bound_ <= 66 <= clf.training_errors_
    assert clf.gap_ == pytest.approx(1 - clf.lower_bound_ / clf.training_errors_)


@pytest.mark.parametrize("kind", ["gaussian", "grid", "collinear", "flat"])
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("method", ["auto", "exact", "iis_cover", "interleaved"])
def test_every_path_is_certified_against_brute_force(monkeypatch, method, seed, kind):
    """Complete fits equal the brute-force optimum with a tight bound; budget-stopped fits
    never claim more than they proved. "interleaved": auto with the IIS cover first and
    slices so short that both paths alternate many times, and the big-M MILP's turn
    inside the cover's first one."""
    if method == "interleaved":
        monkeypatch.setattr("exactclf._zero_one._portfolio._IIS_FIRST_DIM", 1)
        monkeypatch.setattr("exactclf._zero_one._portfolio._MIN_SLICE", 0.0)
        monkeypatch.setattr("exactclf._zero_one._portfolio._HIGH_DIM", 1)
        monkeypatch.setattr("exactclf._zero_one._portfolio._MILP_TURN_SECONDS", 1e-3)
        method = "auto"
    rng = np.random.default_rng(1000 * seed + len(kind))
    Z, wpos, wneg = random_instance(rng, kind, int(rng.integers(2, 10)),
                                    int(rng.integers(1, 5)))
    if seed % 2:
        wpos, wneg = wpos * rng.uniform(0.5, 2.0, len(Z)), wneg * 1.5  # real weights
    X, y, w = weighted_samples(Z, wpos, wneg)
    opt = brute_force_min01(Z, wpos, wneg)
    tol = 1e-9 * max(1.0, opt)
    clf = ICEClassifier(method=method, device="cpu").fit(X, y, sample_weight=w)
    assert clf.is_optimal_ and clf.gap_ == 0
    assert clf.training_errors_ == pytest.approx(opt, rel=1e-12, abs=1e-12)
    assert clf.training_errors_ == pytest.approx(_errors(clf, X, y, w), rel=1e-12)
    assert opt - 2e-6 * max(1.0, opt) <= clf.lower_bound_ <= opt + tol
    budget = {"time_limit": 1e-3} if method == "iis_cover" else {"max_candidates": 2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        b = ICEClassifier(method=method, device="cpu", upper_bound="surrogate",
                          **budget).fit(X, y, sample_weight=w)
    assert b.lower_bound_ <= opt + tol <= b.training_errors_ + 2 * tol
    assert b.training_errors_ == pytest.approx(_errors(b, X, y, w), rel=1e-12)
    # both certificates hold up to an independent re-check
    assert verify(clf, X, y, w).ok and verify(b, X, y, w).ok
    if b.is_optimal_:
        assert b.training_errors_ == pytest.approx(opt, rel=1e-12, abs=1e-12)
    else:
        assert b.stop_reason_ is not None and b.gap_ > 0


@pytest.mark.parametrize("kind", ["gaussian", "grid", "flat"])
@pytest.mark.parametrize("seed", range(3))
def test_every_path_agrees_with_the_others_beyond_brute_force(seed, kind):
    rng = np.random.default_rng(77 + seed)
    Z, wpos, wneg = random_instance(rng, kind, 45, int(rng.integers(2, 5)))
    X, y, w = weighted_samples(Z, wpos * rng.uniform(0.5, 2.0, len(Z)), wneg)
    fits = {m: ICEClassifier(method=m, device="cpu").fit(X, y, sample_weight=w)
            for m in ("exact", "iis_cover", "auto")}
    opt = fits["exact"].training_errors_
    for m, clf in fits.items():
        assert clf.is_optimal_, m
        assert clf.training_errors_ == pytest.approx(opt, rel=1e-9), m
        assert opt * (1 - 2e-6) <= clf.lower_bound_ <= opt * (1 + 1e-12), m


def test_interrupt_during_the_iis_cover_returns_the_best_model_so_far(monkeypatch):
    from exactclf._zero_one._iis import IISOracle

    def interrupted(self, keep, objective):
        raise KeyboardInterrupt

    monkeypatch.setattr(IISOracle, "find_iis", interrupted)
    X, y = load_cryotherapy(return_X_y=True)
    with pytest.warns(RuntimeWarning, match="interrupted"):
        clf = ICEClassifier(device="cpu").fit(X, y)  # auto: the IIS cover first
    assert clf.stop_reason_ == "interrupted" and not clf.is_optimal_
    assert clf.n_candidates_ == 0  # no enumeration after Ctrl-C
    assert clf.lower_bound_ <= 4 <= clf.training_errors_ == _errors(clf, X, y)


def test_iis_cover_budget_gives_a_proven_bound_and_gap():
    X, y = load_cryotherapy(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="optimality is not proven"):
        clf = ICEClassifier(method="iis_cover", time_limit=1e-3).fit(X, y)
    assert clf.method_ == "iis_cover" and not clf.is_optimal_
    assert clf.lower_bound_ <= 4 <= clf.training_errors_ == _errors(clf, X, y)
    assert 0 <= clf.gap_ <= 1 and clf.stop_reason_ == "time_limit"


def test_iis_cover_matches_the_published_optimum_in_dimension_six():
    X, y = load_cryotherapy(return_X_y=True)
    clf = ICEClassifier(device="cpu").fit(X, y)  # auto: the IIS cover first from D = 5
    assert clf.method_ == "iis_cover" and clf.training_errors_ == 4 == _errors(clf, X, y)
    assert clf.is_optimal_ and clf.lower_bound_ == 4


def test_refusal_quotes_the_bound_a_budget_gives(monkeypatch):
    monkeypatch.setattr("exactclf.linear._ice._MILP_SECONDS", 2.0)
    monkeypatch.setattr("exactclf.linear._ice._REFUSAL_BOUND_SECONDS", 0.5)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 8))
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    with pytest.raises(ValueError, match=r"gives you a bound of about \d+ errors or better"):
        ICEClassifier(method="exact").fit(X, y)
    # the advice holds: auto without a budget runs the IIS cover path, whose bound (no
    # duplicates here) is proven
    with pytest.warns(ConvergenceWarning, match="give it a time_limit"):
        clf = ICEClassifier(method="auto").fit(X, y)
    assert clf.lower_bound_ > 0 and clf.lower_bound_method_ != "conflicting duplicates"
    assert clf.lower_bound_ <= clf.training_errors_ == _errors(clf, X, y)
    assert not assert_verifies(clf, X, y).not_checked


def test_one_unit_networks_in_the_users_features_give_realizable_labelings():
    """The incumbent's networks run in the frame and in the standardized original features
    (Adam's path depends on the coordinates); both labelings are half-spaces of the frame,
    and the best incumbent is the best of them. Features near overflow keep the frame only."""
    from exactclf._geometry import affine_frame
    from exactclf._separator import max_margin_separator
    from exactclf._zero_one._incumbent import best_incumbent, one_unit_networks
    from exactclf._zero_one._min01 import labeling_errors

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) @ np.array([[1.0, 0.9, 0.0], [0.0, 0.3, 0.0], [0, 0, 2]])
    X = X * [1e3, 1.0, 1e-3] + [5e4, 0.0, -7.0]  # awkward units, correlated features
    y = (X[:, 0] - 5e4) / 1e3 + rng.normal(size=300) > 0.4
    U, wpos, wneg, _ = merge_duplicates(X, y, np.ones(len(y)))
    Z = affine_frame(U).transform(U)
    nets = dict(one_unit_networks(Z, wpos, wneg, original=U))
    assert list(nets) == ["MLPClassifier(1), seed 0",
                          "MLPClassifier(1), standardized features, seed 0"]
    for pos in nets.values():
        a, b = max_margin_separator(Z, pos)
        np.testing.assert_array_equal(Z @ a + b > 0, pos)
    pos, errors, source, interrupted = best_incumbent(Z, wpos, wneg, networks=True, original=U)
    assert not interrupted and errors == labeling_errors(pos, wpos, wneg)
    assert errors <= min(labeling_errors(p, wpos, wneg) for p in nets.values())
    huge = U.copy()
    huge[:, 0] = np.where(np.arange(len(U)) % 2, 1.7e308, -1.7e308)
    assert len(list(one_unit_networks(Z, wpos, wneg, original=huge))) == 1


@pytest.mark.parametrize("seed", range(20))
def test_best_offset_is_the_best_threshold(seed):
    """:func:`best_offset` against every threshold tried by brute force (between and
    outside the distinct values), with ties in the scores, weights, and points with both
    labels: the fewest weighted errors, never splitting a tie."""
    from exactclf._zero_one._incumbent import best_offset
    from exactclf._zero_one._min01 import labeling_errors

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    d = rng.integers(-4, 5, n) * 0.5  # many ties
    wpos = rng.integers(0, 3, n) * rng.random()
    wneg = rng.integers(0, 3, n) * 1.0
    got = best_offset(d, wpos, wneg)
    values = np.unique(d)
    cuts = np.r_[values[0] - 1, (values[1:] + values[:-1]) / 2, values[-1] + 1]
    best = min(labeling_errors(d > t, wpos, wneg) for t in cuts)
    assert labeling_errors(got, wpos, wneg) == pytest.approx(best, rel=1e-12, abs=0)
    assert any(np.array_equal(got, d > t) for t in cuts)  # a threshold realizes it


def test_a_plane_that_float64_cannot_hold_in_the_original_units_is_not_certified():
    """Features at 1e9 that vary by 1e-6: the frame (centred at a data point) resolves them
    and the search finds its optimum, but ``coef_ . x + intercept_`` in float64 loses the
    spread. The fit reports the errors its model makes, without a proof, instead of failing
    (seeded instances on which it raised before)."""
    import warnings

    rng = np.random.default_rng(0)
    seen = 0
    for t in range(26):
        d, n = 3 + t % 3, 24 + t % 7
        X = rng.integers(-3, 4, size=(n, d)).astype(float) if t % 2 else rng.normal(size=(n, d))
        y = (X[:, 0] + 0.7 * rng.normal(size=n) > 0).astype(int)
        X[:3], y[:3] = X[3:6], 1 - y[3:6]
        w = rng.integers(0, 4, n).astype(float)
        w[-1] = 0.0
        if t not in (6, 9, 15, 18, 25):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = ICEClassifier(method="iis_cover", device="cpu").fit(
                X * 1e-6 + 1e9, y, sample_weight=w)
        made = float(w[clf.predict(X * 1e-6 + 1e9) != y].sum())
        assert clf.training_errors_ == made
        assert clf.lower_bound_ <= made
        if made > clf.lower_bound_:
            assert not clf.is_optimal_
            seen += 1
    assert seen  # the case arises on these instances


def test_fit_trace_says_where_the_time_went(capsys):
    """A row per stage run, in order, within the fit's time; incumbents never worsen and
    every bound is one on the returned errors; verbose prints the rows to stderr only; the
    trace is pickled with the model."""
    from exactclf._trace import TraceRow

    X, y = load_haberman(return_X_y=True)
    with warnings.catch_warnings():  # stopped by its budget, or proven on a fast machine
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = ICEClassifier(time_limit=1.0, verbose=1).fit(X, y)
    trace = clf.fit_trace_
    out = capsys.readouterr()
    assert out.out == "" and all(row.stage in out.err for row in trace)
    assert trace and all(isinstance(row, TraceRow) for row in trace)
    assert trace[0].stage.startswith("incumbents")
    starts = [row.start for row in trace]
    assert starts == sorted(starts) and all(row.seconds >= 0 for row in trace)
    assert trace[-1].start + trace[-1].seconds <= clf.fit_time_
    incumbents = [row.incumbent for row in trace]
    assert incumbents == sorted(incumbents, reverse=True)
    assert incumbents[-1] >= clf.training_errors_
    assert all(row.bound <= clf.training_errors_ for row in trace)
    assert set(trace[0]._asdict()) == {"stage", "start", "seconds", "incumbent", "bound", "stop"}
    assert pickle.loads(pickle.dumps(clf)).fit_trace_ == trace
    proven = ICEClassifier().fit(X, y).fit_trace_
    assert proven[-1].stop == "proven" and proven[-1].bound == proven[-1].incumbent


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("class_weight", [{1: 3.0}, {0: 0.25, 1: 2.0}, "balanced"])
def test_class_weight_is_sample_weight_times_the_class_weight(seed, class_weight):
    """scikit-learn's semantics: the optimum and the certificate under ``class_weight`` are
    those of the sample weights times each sample's class weight, and equal the brute
    force's on them (ties, duplicates, integer grids); the certificate says which weights
    it counts and verifies."""
    from sklearn.utils.class_weight import compute_sample_weight

    rng = np.random.default_rng(seed)
    kind = ["gaussian", "grid", "flat"][seed % 3]
    Z, wpos, wneg = random_instance(rng, kind, int(rng.integers(8, 14)), 2)
    X, y, w = weighted_samples(Z, wpos, wneg)
    clf = ICEClassifier(class_weight=class_weight, device="cpu").fit(X, y, sample_weight=w)
    combined = w * compute_sample_weight(class_weight, y)
    plain = ICEClassifier(device="cpu").fit(X, y, sample_weight=combined)
    U, wp, wn, _ = merge_duplicates(X, y == clf.classes_[1], combined)
    optimum = brute_force_min01(U, wp, wn)
    assert clf.is_optimal_ and clf.training_errors_ == pytest.approx(optimum, rel=1e-12)
    assert plain.training_errors_ == pytest.approx(clf.training_errors_, rel=1e-12)
    assert "class_weight=" in clf.certificate_.objective
    assert_verifies(clf, X, y, w)
    # another class weight on the model than the fit's: another objective and value
    other = clone(clf).set_params(class_weight={0: 5.0})
    other.__dict__.update({k: v for k, v in clf.__dict__.items() if k.endswith("_")})
    assert not verify(other, X, y, w).ok
