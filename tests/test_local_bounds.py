"""Local IIS covers, obstruction covers and the linear local search beyond the exact range,
against independent oracles (brute force, the enumeration)."""

import itertools
import time
import warnings
from dataclasses import replace

import numpy as np
import pytest
from _helpers import assert_verifies, brute_force_min01, random_instance, strictly_separable
from scipy.optimize import linprog
from sklearn.exceptions import ConvergenceWarning

from exactclf import DeepICEMaxoutClassifier, ICEClassifier
from exactclf._certificate import StopReason
from exactclf._separator import max_margin_separator
from exactclf._zero_one import _local_search, _portfolio
from exactclf._zero_one._iis import farkas_multipliers
from exactclf._zero_one._local_cover import local_cover_bound
from exactclf._zero_one._local_search import improve_incumbent, worth_searching
from exactclf._zero_one._min01 import labeling_errors, solve_min01

KINDS = ["gaussian", "grid", "collinear", "flat"]


def _instance(seed, n, d):
    rng = np.random.default_rng(seed)
    Z, wpos, wneg = random_instance(rng, KINDS[seed % 4], n, d)
    if seed % 3 == 0:  # conflicting duplicates
        wpos = wpos + rng.integers(0, 2, len(Z))
    if seed % 5 == 0:  # weights in other units
        wpos, wneg = wpos * 1e-7, wneg * 1e-7
    return Z, wpos, wneg


def _in_hull(p, S):
    """Is ``p`` a convex combination of the rows of ``S``? (LP, independent of exactclf)"""
    if len(S) == 0:
        return False
    A = np.vstack([S.T, np.ones(len(S))])
    res = linprog(np.zeros(len(S)), A_eq=A, b_eq=np.r_[p, 1.0], bounds=(0, None),
                  method="highs")
    return res.status == 0


def _brute_force_any_k(Z, want_w, other_w):
    """The least weighted errors of a network whose other-class region is any convex
    polyhedron (any number of half-spaces): the kept other-class points S span conv(S), the
    union-class points inside it err, the others outside it."""
    base = float(np.minimum(want_w, other_w).sum())
    cost = np.abs(want_w - other_w)
    union = np.flatnonzero(want_w > other_w)
    others = np.flatnonzero(other_w > want_w)
    best = np.inf
    for bits in itertools.product([False, True], repeat=len(others)):
        S = others[np.array(bits, dtype=bool)] if len(others) else others
        errors = cost[np.setdiff1d(others, S)].sum()
        errors += sum(cost[p] for p in union if _in_hull(Z[p], Z[S]))
        best = min(best, errors)
    return base + best


def _is_iis(Z, wpos, wneg, cut):
    sign = np.where(wpos[cut] > wneg[cut], 1.0, -1.0)
    G = np.hstack([Z[cut], np.ones((len(cut), 1))]) * sign[:, None]
    return farkas_multipliers(G) is not None


@pytest.mark.parametrize("seed", range(24))
def test_local_cover_bound_never_exceeds_the_brute_force_optimum(seed):
    Z, wpos, wneg = _instance(seed, int(np.random.default_rng(seed).integers(4, 10)),
                              1 + seed % 3)
    opt = brute_force_min01(Z, wpos, wneg)
    lb = local_cover_bound(Z, wpos, wneg, time_limit=2.0, random_state=seed)
    assert lb.value <= opt * (1 + 1e-9)
    assert all(_is_iis(Z, wpos, wneg, t) for t in lb.cuts)


@pytest.mark.parametrize("seed", range(8))
def test_local_cover_bound_on_neighbourhoods_below_the_enumeration(seed):
    """More points than a neighbourhood holds: the IISs are local, the bound still valid,
    and around the errors of a plane it proves something."""
    rng = np.random.default_rng(seed)
    n, d = 120, 2 + seed % 2
    Z = rng.normal(size=(n, d))
    pos = Z[:, 0] + 0.6 * rng.normal(size=n) > 0
    wpos, wneg = pos * 1.0, ~pos * 1.0
    opt = solve_min01(Z, wpos, wneg)
    assert opt.complete
    lb = local_cover_bound(Z, wpos, wneg, anchors=opt.positive != pos, time_limit=3.0,
                           random_state=seed)
    assert 0 < lb.value <= opt.value
    assert all(_is_iis(Z, wpos, wneg, t) for t in lb.cuts)


@pytest.mark.parametrize("seed", range(16))
def test_obstruction_cover_bounds_every_number_of_half_spaces(seed):
    Z, wpos, wneg = _instance(100 + seed, int(np.random.default_rng(seed).integers(4, 11)),
                              1 + seed % 3)
    for want_w, other_w in ((wpos, wneg), (wneg, wpos)):
        lb = local_cover_bound(Z, want_w, other_w, hull_only=True, time_limit=2.0,
                               random_state=seed)
        assert lb.value <= _brute_force_any_k(Z, want_w, other_w) * (1 + 1e-9)
        for t in lb.cuts:  # one point of the union's class in the hull of the others
            assert _is_iis(Z, want_w, other_w, t)
            assert (want_w[t] > other_w[t]).sum() == 1


def _spy(monkeypatch, name):
    """Replace ``_portfolio.<name>`` by a wrapper that records its last call: a dict with
    the call's ``kwargs`` and its ``result``."""
    real, seen = getattr(_portfolio, name), {}

    def spy(*args, **kwargs):
        seen["kwargs"], seen["result"] = kwargs, real(*args, **kwargs)
        return seen["result"]

    monkeypatch.setattr(_portfolio, name, spy)
    return seen


def test_obstruction_bound_below_the_exact_networks():
    """On a noisy disk the obstruction bound is positive and at most the optimum of K = 2
    found by the exact search, in both polarities."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    y = ((X**2).sum(axis=1) + 0.8 * rng.normal(size=40) > 1.2).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact").fit(X, y)
    assert clf.is_optimal_
    bounds = [local_cover_bound(X, (y == c) * 1.0, (y != c) * 1.0, hull_only=True,
                                time_limit=3.0).value for c in (0, 1)]
    assert 0 < min(bounds) <= clf.training_errors_


@pytest.mark.parametrize("seed", range(6))
def test_local_search_returns_a_realized_labeling_never_worse(seed):
    rng = np.random.default_rng(seed)
    n, d = 1500, 3  # subsets of about 300 points
    Z = rng.normal(size=(n, d))
    pos = Z @ rng.normal(size=d) + 0.8 * rng.normal(size=n) > 0.3
    wpos, wneg = pos * 1.0, ~pos * 1.0
    start = Z[:, 0] > 0
    start_errors = labeling_errors(start, wpos, wneg)
    best, value, interrupted = improve_incumbent(Z, wpos, wneg, start, time_limit=3.0,
                                                 random_state=seed)
    assert not interrupted
    assert value == labeling_errors(best, wpos, wneg) < start_errors
    a, b = max_margin_separator(Z, best)  # strictly realizable
    assert np.array_equal(Z @ a + b > 0, best)


def test_ice_beyond_the_exact_range_certifies_a_verified_bound():
    """An instance the enumeration cannot finish in the budget (features in awkward units):
    the bound is positive and comes with IISs that verify, predict makes the errors the
    certificate states."""
    rng = np.random.default_rng(0)
    n = 1400
    X = rng.normal(size=(n, 3)) * [1.0, 1e4, 1e-3] + [0.0, 1e9, 0.0]
    y = ((X[:, 0] > 0.4) ^ (rng.uniform(size=n) < 0.12)).astype(int)
    assert worth_searching(n, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = ICEClassifier(time_limit=8.0).fit(X, y)
    assert (clf.predict(X) != y).sum() == clf.training_errors_
    assert 0 < clf.lower_bound_ <= clf.training_errors_
    assert_verifies(clf, X, y)


def test_portfolio_hands_the_local_cover_to_the_iis_cover(monkeypatch):
    """The IIS cover starts from the local cover's IISs and bound: its bound is never
    below the local one, and the IISs of the returned bound verify as IISs."""
    rng = np.random.default_rng(1)
    n = 900
    Z = rng.normal(size=(n, 5))
    pos = Z[:, 0] + 0.5 * rng.normal(size=n) > 0
    wpos, wneg = pos * 1.0, ~pos * 1.0
    monkeypatch.setattr(_portfolio, "_LOCAL_FROM_SECONDS", 0.0)
    seen = _spy(monkeypatch, "local_cover_bound")
    res = _portfolio.solve_portfolio(Z, Z, wpos, wneg, method="iis_cover", time_limit=6.0)
    assert "result" in seen
    assert res.lower_bound >= min(seen["result"].value, res.value)
    assert res.iis is not None
    assert all(_is_iis(Z, wpos, wneg, t) for t in res.iis)


@pytest.mark.parametrize("scale", [1e-9, 3.0, 1e9])
def test_local_cover_bound_scales_with_the_weights(scale):
    """Weights in other units: the same IISs, the bound in those units."""
    rng = np.random.default_rng(5)
    Z, wpos, wneg = random_instance(rng, "grid", 30, 2)
    lb = local_cover_bound(Z, wpos, wneg, time_limit=2.0, random_state=0)
    scaled = local_cover_bound(Z, wpos * scale, wneg * scale, time_limit=2.0, random_state=0)
    assert lb.value > 0
    assert scaled.value == pytest.approx(scale * lb.value, rel=1e-6)


def test_portfolio_beyond_the_addressable_ranks_runs_the_iis_cover_alone():
    """Deep-ICE's linear seed calls the portfolio directly: past the ranks the enumeration
    can address, method="auto" must not start it (it raised ValueError)."""
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(300, 20))
    pos = Z[:, 0] + rng.normal(size=300) > 0
    res = _portfolio.solve_portfolio(Z, Z, pos * 1.0, ~pos * 1.0, time_limit=2.0)
    assert res.method == "iis_cover"
    assert res.lower_bound <= res.value == labeling_errors(res.positive, pos * 1.0, ~pos * 1.0)
    X, y = Z[:120], pos[:120].astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = DeepICEMaxoutClassifier(n_hyperplanes=2, time_limit=4.0).fit(X, y)
    assert (clf.predict(X) != y).sum() == clf.training_errors_
    assert clf.lower_bound_ <= clf.training_errors_


def test_ctrl_c_keeps_the_iiss_of_the_bound_it_returns(monkeypatch):
    """Ctrl-C after the first LP: the bound returned comes with the IISs it rests on (an
    ICE certificate built on it must verify)."""
    from exactclf._zero_one import _local_cover

    rng = np.random.default_rng(2)
    Z = rng.normal(size=(200, 2))
    pos = Z[:, 0] + 0.6 * rng.normal(size=200) > 0
    real = _local_cover.CoverModel.solve
    calls = []

    def interrupted(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(_local_cover.CoverModel, "solve", interrupted)
    with pytest.warns(UserWarning, match="interrupted"):
        lb = local_cover_bound(Z, pos * 1.0, ~pos * 1.0, time_limit=5.0)
    assert lb.interrupted and lb.value > 0 and lb.cuts
    assert all(_is_iis(Z, pos * 1.0, ~pos * 1.0, t) for t in lb.cuts)


@pytest.mark.parametrize("seed", range(3))
def test_low_dimension_beyond_the_exact_range_takes_the_random_partition_bound(monkeypatch,
                                                                                seed):
    """Below dimension 5, beyond the exact range, the partition bound on random blocks runs
    after the local cover; the certificate keeps the larger bound, which never exceeds the
    optimum, and verifies (a partition bound carries no IISs)."""
    rng = np.random.default_rng(seed)
    n = 160
    X = np.round(rng.normal(size=(n, 2)) * 4) / 4 * [1e3, 1e-3] + [7e5, 0.0]  # grid, units
    y = (X[:, 0] - 7e5) / 1e3 + 1e3 * X[:, 1] + 1.5 * rng.normal(size=n) > 0
    w = rng.integers(1, 4, size=n).astype(float) if seed == 2 else None
    monkeypatch.setattr(_portfolio, "_LOCAL_FROM_SECONDS", 0.0)
    monkeypatch.setattr(_portfolio, "worth_searching", lambda n, dim: True)
    seen = _spy(monkeypatch, "partition_bound")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = ICEClassifier(time_limit=4.0, method="auto").fit(X, y, sample_weight=w)
        opt = ICEClassifier(method="exact").fit(X, y, sample_weight=w).training_errors_
    assert seen["result"].method.startswith("partition (")
    assert seen["result"].value <= opt
    assert clf.lower_bound_ <= opt <= clf.training_errors_
    assert clf.lower_bound_ >= min(seen["result"].value, clf.training_errors_)
    if clf.lower_bound_method_.startswith("partition"):
        assert clf.certificate_.witness.kind == "none"
    assert_verifies(clf, X, y, w)


def test_random_partition_bound_carries_the_certificate_of_a_large_low_dimensional_fit():
    """2000 noisy points in 3-D with a budget of seconds: beyond the exact range, the
    random partitions prove far more than the IIS covers; the certificate states their
    bound, without IISs, and verifies."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    y = X[:, 0] + X[:, 1] + rng.normal(size=2000) > 0
    with pytest.warns(ConvergenceWarning, match="stopped early .* beyond the exact range"):
        clf = ICEClassifier(time_limit=6.0).fit(X, y)
    assert clf.lower_bound_method_.startswith("partition (")
    assert 0.4 * clf.training_errors_ < clf.lower_bound_ < clf.training_errors_
    assert clf.certificate_.witness.kind == "none"
    assert_verifies(clf, X, y)


@pytest.mark.parametrize("paths", [["iis_cover"], ["exact", "iis_cover"]])
def test_random_partitions_leave_the_enumeration_its_time(monkeypatch, paths):
    """The random partitions take the rest of the budget only where the enumeration cannot
    finish in it; where it may, they take their share and the enumeration runs after."""
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(400, 3))
    pos = Z[:, 0] + rng.normal(size=400) > 0
    monkeypatch.setattr(_portfolio, "_LOCAL_FROM_SECONDS", 0.0)
    monkeypatch.setattr(_portfolio, "worth_searching", lambda n, dim: True)
    monkeypatch.setattr(_portfolio, "path_order", lambda *args, **kwargs: list(paths))
    seen = _spy(monkeypatch, "partition_bound")
    res = _portfolio.solve_portfolio(Z, Z, pos * 1.0, ~pos * 1.0, time_limit=4.0)
    seconds = seen["kwargs"]["time_limit"]
    if paths[0] == "exact":
        assert seconds == pytest.approx(_portfolio._RANDOM_PARTITION_SHARE * 4.0)
        assert res.n_candidates > 0  # the enumeration ran after them
    else:
        assert seconds > _portfolio._RANDOM_PARTITION_SHARE * 4.0
    assert res.lower_bound <= res.value


@pytest.mark.parametrize("seed", range(12))
def test_a_neighbourhood_with_the_other_sides_kept_is_solved_exactly(seed):
    """The large-neighbourhood move: the best labeling that differs from the incumbent only
    inside the neighbourhood, against brute force over the inside points' labels."""
    d = 2 + seed % 2
    Z, wpos, wneg = _instance(seed, 13, d)
    n = len(Z)  # the unique points
    rng = np.random.default_rng(seed)
    incumbent = Z @ rng.normal(size=d) > np.median(Z @ rng.normal(size=d)) - 1.0
    if incumbent.all() or not incumbent.any():
        incumbent[0] = not incumbent[0]  # a single point is always cut off (distinct points)
    inside = np.zeros(n, dtype=bool)
    inside[rng.choice(n, size=min(7, n - 1), replace=False)] = True
    plane, complete, interrupted = _local_search._solve_fixed(Z, wpos, wneg, incumbent,
                                                              inside, 30.0)
    assert complete and not interrupted  # 4 x 7 points: all of them are solved
    best = np.inf
    for bits in itertools.product([False, True], repeat=int(inside.sum())):
        trial = incumbent.copy()
        trial[inside] = bits
        cost = labeling_errors(trial, wpos, wneg)
        if cost < best and strictly_separable(Z, trial):
            best = cost
    if plane is None:  # one class for every point is optimal: no plane, a constant
        assert min(wpos.sum(), wneg.sum()) == pytest.approx(best, rel=1e-12)
        return
    labels = Z @ plane[0] + plane[1] > 0
    assert np.array_equal(labels[~inside], incumbent[~inside])
    assert strictly_separable(Z, labels)
    assert labeling_errors(labels, wpos, wneg) == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_local_search_above_the_enumeration_dimensions_improves(seed):
    """Above 5-D the moves keep the other points' sides: from a poor plane the search finds
    a better realized labeling."""
    rng = np.random.default_rng(seed)
    n, d = 1200, 6
    Z = rng.normal(size=(n, d))
    pos = Z @ rng.normal(size=d) + 0.8 * rng.normal(size=n) > 0
    wpos, wneg = pos * 1.0, ~pos * 1.0
    start = Z @ rng.normal(size=d) > 0
    best, value, interrupted = improve_incumbent(Z, wpos, wneg, start, time_limit=3.0,
                                                 random_state=seed)
    assert not interrupted
    assert value == labeling_errors(best, wpos, wneg) < labeling_errors(start, wpos, wneg)
    a, b = max_margin_separator(Z, best)
    assert np.array_equal(Z @ a + b > 0, best)


def test_ctrl_c_in_a_fixed_neighbourhood_ends_the_search(monkeypatch):
    """Ctrl-C inside a large neighbourhood's IIS cover ends the local search at once, with
    the best labeling so far (the start here) and ``interrupted``."""
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(1200, 6))
    pos = Z[:, 0] + 0.8 * rng.normal(size=1200) > 0
    start = Z[:, 1] > 0
    solve = _local_search.solve_iis_cover

    def interrupted(*args, **kwargs):
        res = solve(*args, **{**kwargs, "time_limit": 0.0})
        return replace(res, stop_reason=StopReason.INTERRUPTED, complete=False)

    monkeypatch.setattr(_local_search, "solve_iis_cover", interrupted)
    best, value, stopped = improve_incumbent(Z, pos * 1.0, ~pos * 1.0, start, time_limit=30.0)
    assert stopped
    assert value == labeling_errors(best, pos * 1.0, ~pos * 1.0) <= labeling_errors(
        start, pos * 1.0, ~pos * 1.0)


@pytest.mark.parametrize("seed", range(3))
def test_the_portfolio_goes_on_from_a_given_labeling(monkeypatch, seed):
    """``incumbent=`` replaces the heuristic incumbents (none of them runs): in the exact
    range the result is still the optimum, from a poor start or an optimal one; beyond it
    the local search starts from the given plane, so the result errs no more than it."""
    calls = []
    monkeypatch.setattr(_portfolio, "incumbent_candidates", lambda *a, **k: calls.append(1))
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(40, 2))
    pos = Z[:, 0] + 0.7 * rng.normal(size=40) > 0
    wpos, wneg = pos * 1.0, ~pos * 1.0
    opt = solve_min01(Z, wpos, wneg)
    for start in (np.zeros(40, dtype=bool), opt.positive):
        res = _portfolio.solve_portfolio(Z, Z, wpos, wneg, incumbent=start)
        assert res.complete and res.value == opt.value == res.lower_bound
        assert res.upper_bound == labeling_errors(start, wpos, wneg)
        assert res.upper_bound_source == "the given labeling"
    # beyond the exact range (a 5-D instance of 3000 points at a 4 s budget)
    Z = rng.normal(size=(3000, 5))
    pos = Z @ rng.normal(size=5) + rng.normal(size=3000) > 0
    wpos, wneg = pos * 1.0, ~pos * 1.0
    start = Z[:, 0] > 0  # a realized plane, far from the best
    seen = []
    real = _portfolio.improve_from_starts

    def spy(Z, wpos, wneg, starts, **kwargs):
        seen.extend(labeling_errors(positive, wpos, wneg) for _, positive in starts)
        return real(Z, wpos, wneg, starts, **kwargs)

    monkeypatch.setattr(_portfolio, "improve_from_starts", spy)
    res = _portfolio.solve_portfolio(Z, Z, wpos, wneg, time_limit=4.0, incumbent=start)
    assert seen == [labeling_errors(start, wpos, wneg)]
    assert res.lower_bound <= res.value <= seen[0]
    assert res.value == labeling_errors(res.positive, wpos, wneg)
    assert not calls


def test_the_local_search_goes_through_every_start_and_keeps_the_best(monkeypatch):
    """improve_from_starts runs the search from each start in order, then from the best
    labeling found while that improves it; the result is the best run's, named by the start
    it came from; a constant labeling (no plane to move) gets no run. The runs are
    stand-ins here, so the order is exact."""

    n = 8
    labelings = [np.arange(n) < k for k in range(1, 6)]  # 1..5 leading positives
    wpos, wneg = np.ones(n), np.zeros(n)  # errors of labeling k: n - k
    a, b = labelings[2], labelings[0]  # 5 and 7 errors
    # a's run reaches 4 errors; b's (the worse start) 3; from b's 3 once more: 3 again
    results = {2: labelings[3], 0: labelings[4], 4: labelings[4]}
    calls = []

    def run(Z, wpos, wneg, positive, *, time_limit, patience, random_state):
        k = int(positive.sum()) - 1
        calls.append((k, patience))
        return results[k], labeling_errors(results[k], wpos, wneg), False

    monkeypatch.setattr(_local_search, "improve_incumbent", run)
    Z = np.zeros((n, 1))
    best, value, source, interrupted = _local_search.improve_from_starts(
        Z, wpos, wneg, [("a", a), ("none", np.zeros(n, dtype=bool)), ("b", b)],
        time_limit=100.0)
    assert [k for k, _ in calls] == [2, 0, 4] and not interrupted
    assert value == 3 and source == "b" and best is results[0]
    # patience: a tenth of the time limit, and at least the floor
    assert calls[0][1] == pytest.approx(max(_local_search._MIN_PATIENCE, 10.0))
    # no time: the best start, unsearched
    best, value, source, _ = _local_search.improve_from_starts(
        Z, wpos, wneg, [("b", b), ("a", a)], time_limit=0.0)
    assert (source, value) == ("a", 5) and np.array_equal(best, a)


@pytest.mark.slow  # (18 s; CI runs the slow tests)
def test_a_run_that_stops_improving_hands_its_time_to_the_next_start(monkeypatch):
    """patience: a run that finds nothing better for that long stops, long before its time
    limit; ``improve_from_starts`` then starts the next one. Real searches, patience cut to
    0.3 s: a 4-D instance beyond the exact range from two poor starts."""

    monkeypatch.setattr(_local_search, "_MIN_PATIENCE", 0.3)
    monkeypatch.setattr(_local_search, "_PATIENCE_SHARE", 0.01)
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(1500, 4))
    pos = Z @ [1.0, -0.5, 0.3, 0.2] + 0.5 * rng.normal(size=1500) > 0
    wpos, wneg = pos * 1.0, ~pos * 1.0
    starts = [("x1", Z[:, 1] > 0), ("x2", Z[:, 2] > 0)]
    real, runs = _local_search.improve_incumbent, []

    def spy(*args, **kwargs):
        t = time.perf_counter()
        out = real(*args, **kwargs)
        runs.append((time.perf_counter() - t, kwargs["time_limit"]))
        return out

    monkeypatch.setattr(_local_search, "improve_incumbent", spy)
    best, value, source, _ = _local_search.improve_from_starts(
        Z, wpos, wneg, starts, time_limit=20.0)
    assert len(runs) >= 3  # both starts, then at least one run from the best
    assert runs[0][0] < runs[0][1] / 2  # the first stopped for want of progress
    assert value == labeling_errors(best, wpos, wneg)
    assert value < min(labeling_errors(p, wpos, wneg) for _, p in starts)
    assert source in ("x1", "x2")
    a, b = max_margin_separator(Z, best)
    np.testing.assert_array_equal(Z @ a + b > 0, best)  # realized by a plane


def test_beyond_the_exact_range_the_local_search_starts_from_every_incumbent(monkeypatch):
    """The portfolio's model is no worse than any incumbent it had (the surrogates, the
    networks, the MILP: one stage each), and the local search starts from each distinct one,
    the best first."""
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(3000, 5))
    pos = Z @ rng.normal(size=5) + rng.normal(size=3000) > 0
    wpos, wneg = pos * 1.0, ~pos * 1.0
    real_candidates, real_search, seen = (_portfolio.incumbent_candidates,
                                          _portfolio.improve_from_starts, {"stages": []})

    def candidates(*args, **kwargs):
        cands, interrupted = real_candidates(*args, **kwargs)
        seen["stages"].append(cands)
        # every stage's labelings, in the order tried; repeats left out, fewest errors first
        seen["candidates"] = []
        for cand in sorted((c for stage in seen["stages"] for c in stage),
                           key=lambda c: c[2]):
            if not any(np.array_equal(cand[1], q) for _, q, _ in seen["candidates"]):
                seen["candidates"].append(cand)
        return cands, interrupted

    def search(Z, wpos, wneg, starts, **kwargs):
        seen["starts"] = starts
        return real_search(Z, wpos, wneg, starts, **kwargs)

    monkeypatch.setattr(_portfolio, "incumbent_candidates", candidates)
    monkeypatch.setattr(_portfolio, "improve_from_starts", search)
    res = _portfolio.solve_portfolio(Z, Z, wpos, wneg, time_limit=6.0)
    errors = [e for _, _, e in seen["candidates"]]
    assert len(seen["stages"]) == 3 and len(errors) >= 3
    assert [s for s, _ in seen["starts"]] == [s for s, _, _ in seen["candidates"]]
    assert res.value <= errors[0] and res.value == labeling_errors(res.positive, wpos, wneg)
    for i, (_, p, _) in enumerate(seen["candidates"]):  # distinct labelings
        assert not any(np.array_equal(p, q) for _, q, _ in seen["candidates"][:i])


def test_an_iis_cover_that_proves_nothing_leaves_the_quick_bound_its_reserve(monkeypatch):
    """The enumeration and the IIS cover share the budget and both stop before a bound above
    the conflicting duplicates: the quick bound still runs, in the share reserved for it up
    front (the IIS cover's own turn no longer takes that reserve)."""
    from exactclf._zero_one._iis import IISCoverSolver

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(300, 3))
    pos = Z[:, 0] + rng.normal(size=300) > 0
    monkeypatch.setattr(_portfolio, "path_order", lambda *a, **k: ["exact", "iis_cover"])
    real_run = IISCoverSolver.run

    def no_bound(self, seconds, reserve=0.0):  # an IIS cover stopped at its first round
        res = real_run(self, 1e-3, 0.0)
        return replace(res, lower_bound=0.0, complete=False,
                       stop_reason=StopReason.TIME_LIMIT)

    monkeypatch.setattr(IISCoverSolver, "run", no_bound)
    seen = _spy(monkeypatch, "lower_bound")
    res = _portfolio.solve_portfolio(Z, Z, pos * 1.0, ~pos * 1.0, time_limit=2.0)
    assert not res.complete and "kwargs" in seen  # the quick bound ran
    assert seen["kwargs"]["time_limit"] >= 0.5 * _portfolio._BOUND_SHARE * 2.0
    assert res.lower_bound == max(seen["result"].value, 0.0)
