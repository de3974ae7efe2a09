"""Exactness of the 0-1 loss search against independent oracles, on every backend."""

import threading

import numpy as np
import pytest
from _helpers import brute_force_min01, random_instance, strictly_separable

from exactclf._backend import REFERENCE
from exactclf._search import Candidate, ChunkResult, run_search
from exactclf._zero_one._milp import bigm_milp
from exactclf._zero_one._min01 import labeling_errors, solve_min01

KINDS = ["gaussian", "grid", "collinear", "flat"]


def _check_result(Z, wpos, wneg, res, expected):
    assert res.complete
    assert res.value == expected
    # the labeling is realizable and realizes the value
    assert labeling_errors(res.positive, wpos, wneg) == res.value
    assert strictly_separable(Z, res.positive)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(12))
def test_matches_brute_force(kind, seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 5))
    n = int(rng.integers(2, 10))
    Z, wpos, wneg = random_instance(rng, kind, n, d)
    expected = brute_force_min01(Z, wpos, wneg)
    cpu = solve_min01(Z, wpos, wneg)
    ref = solve_min01(Z, wpos, wneg, backend=REFERENCE)
    _check_result(Z, wpos, wneg, cpu, expected)
    _check_result(Z, wpos, wneg, ref, expected)
    np.testing.assert_array_equal(cpu.positive, ref.positive)


@pytest.mark.parametrize("seed", range(6))
def test_matches_milp_on_integer_grids(seed):
    """Larger degenerate instances: an independent MILP (coarse integer grid, so every
    realizable cell is thick enough for its bounded weights)."""
    rng = np.random.default_rng(100 + seed)
    d = 2 + seed % 2
    Z = rng.integers(0, 4, size=(40, d)).astype(float)
    y = (Z.sum(axis=1) + rng.integers(-2, 3, size=40)) > 1.5 * d
    Z, inverse = np.unique(Z, axis=0, return_inverse=True)
    wpos = np.bincount(inverse, weights=y, minlength=len(Z))
    wneg = np.bincount(inverse, weights=~y, minlength=len(Z))
    milp = bigm_milp(Z, wpos, wneg, weight_bound=1e4)
    assert milp.optimal
    res = solve_min01(Z, wpos, wneg)
    ref = solve_min01(Z, wpos, wneg, backend=REFERENCE)
    _check_result(Z, wpos, wneg, res, milp.objective)
    np.testing.assert_array_equal(res.positive, ref.positive)


@pytest.mark.parametrize("seed", range(3))
def test_parallel_and_chunking_return_the_same_labeling(seed):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 5, size=(30, 3)).astype(float)
    Z = np.unique(Z, axis=0)
    wpos = rng.integers(0, 3, len(Z)).astype(float)
    wneg = rng.integers(0, 3, len(Z)).astype(float)
    serial = solve_min01(Z, wpos, wneg)
    parallel = solve_min01(Z, wpos, wneg, n_jobs=2)
    assert serial.complete and parallel.complete
    assert serial.value == parallel.value
    np.testing.assert_array_equal(serial.positive, parallel.positive)


def test_budget_is_deterministic_and_marked_incomplete():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(40, 3))
    wpos = (Z[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(float)
    wneg = 1.0 - wpos
    a = solve_min01(Z, wpos, wneg, max_candidates=500)
    b = solve_min01(Z, wpos, wneg, max_candidates=500, n_jobs=2)
    full = solve_min01(Z, wpos, wneg)
    assert not a.complete and a.stop_reason == "max_candidates" and a.n_candidates == 500
    np.testing.assert_array_equal(a.positive, b.positive)
    assert full.complete and full.value <= a.value


def test_incumbent_is_kept_when_nothing_beats_it():
    Z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    wpos = np.array([0.0, 1.0, 1.0, 0.0])  # XOR: the best is one error
    wneg = 1.0 - wpos
    incumbent = np.array([False, True, True, True])
    res = solve_min01(Z, wpos, wneg, incumbent=incumbent)
    assert res.value == 1.0 and not res.improved
    np.testing.assert_array_equal(res.positive, incumbent)


def test_conflicting_duplicates_cost_their_minority():
    Z = np.array([[0.0], [1.0], [2.0]])
    wpos = np.array([3.0, 1.0, 0.0])
    wneg = np.array([1.0, 2.0, 5.0])
    res = solve_min01(Z, wpos, wneg)
    assert res.value == 1.0 + 1.0  # point 0 positive (1 error), 1 and 2 negative (1 error)


def test_keyboard_interrupt_returns_best_so_far():
    calls = []

    def scan(r0, r1, ub_lt, ub_le):
        calls.append(r0)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return ChunkResult(Candidate(10.0 - len(calls), r0), [], r1)

    with pytest.warns(RuntimeWarning, match="interrupted"):
        out = run_search(100, scan, lambda p: [], upper_bound=20.0, chunk_size=10)
    assert not out.complete and out.stop_reason == "interrupted"
    assert out.best.value == 8.0 and out.n_candidates == 20


def test_time_limit_stops_the_search():
    def scan(r0, r1, ub_lt, ub_le):
        return ChunkResult(None, [], r1)

    out = run_search(10**9, scan, lambda p: [], upper_bound=1.0, time_limit=1e-9,
                     chunk_size=10)
    assert out.stop_reason == "time_limit" and not out.complete


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_no_chunk_starts_after_the_time_limit(monkeypatch, n_jobs):
    """A chunk not started by the deadline is left, even inside a wave: on a GPU, whose
    chunks run one after another, a wave of 32 once ran 2.2 s past a 20 s limit. A fake
    clock advances one second per chunk: with a 2.5 s limit, three chunks run (the third
    started at 2 s), none after, and the chunks left are not counted as searched."""
    import exactclf._search as search_module

    clock = {"now": 0.0}
    monkeypatch.setattr(search_module.time, "perf_counter", lambda: clock["now"])
    lock = threading.Lock()
    started = []

    def scan(r0, r1, ub_lt, ub_le):
        with lock:
            started.append((clock["now"], r1 - r0))
            clock["now"] += 1.0
        return ChunkResult(None, [], r1)

    out = run_search(10**6, scan, lambda p, b: [], upper_bound=1.0, time_limit=2.5,
                     chunk_size=10, n_jobs=n_jobs)
    assert out.stop_reason == "time_limit" and not out.complete
    assert max(t for t, _ in started) < 2.5 and len(started) == 3
    assert out.n_candidates == sum(size for _, size in started)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(8))
def test_max_margin_separator_is_the_hard_margin_svm(kind, seed):
    """The returned plane satisfies the margin constraints and the KKT conditions of
    ``min |x|^2 / 2 s.t. G x >= 1``: ``x = G_A^T alpha`` with ``alpha >= 0`` on the active set."""
    from scipy.optimize import nnls

    from exactclf._separator import max_margin_separator

    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 5))
    Z, _, _ = random_instance(rng, kind, 30, d)
    Z = np.unique(Z, axis=0)
    proj = Z @ rng.normal(size=Z.shape[1])
    positive = proj > np.median(proj)
    if positive.all() or not positive.any():
        positive = proj > proj.min()
    a, b = max_margin_separator(Z, positive)
    s = np.where(positive, 1.0, -1.0)
    G = np.hstack([Z, np.ones((len(Z), 1))]) * s[:, None]
    x = np.r_[a, b]
    margins = G @ x
    assert np.all(margins >= 1 - 1e-7)
    active = margins <= 1 + 1e-6
    alpha, resid = nnls(G[active].T, x)
    assert resid <= 1e-6 * np.linalg.norm(x)


def test_max_margin_separator_on_a_case_highs_qp_called_nonconvex():
    """Iris-like 4-D block on which HiGHS's QP solver stopped with 'non-convex' (CI failure)."""
    from sklearn.datasets import load_iris

    from exactclf._separator import max_margin_separator

    X, y = load_iris(return_X_y=True)
    a, b = max_margin_separator(X - X.mean(0), y == 0)
    assert np.all(((X - X.mean(0)) @ a + b > 0) == (y == 0))


def test_max_margin_separator_refuses_an_inseparable_labeling():
    from exactclf._separator import max_margin_separator

    Z = np.array([[0.0], [1.0], [2.0]])
    with pytest.raises(RuntimeError, match="not strictly linearly separable"):
        max_margin_separator(Z, np.array([True, False, True]))


def _grid_instance():
    """A small integer grid: many planes through more than D points (nested searches)."""
    rng = np.random.default_rng(7)
    Z = np.unique(rng.integers(0, 4, size=(40, 2)).astype(float), axis=0)
    wpos = (Z.sum(axis=1) + rng.integers(-2, 3, size=len(Z)) > 3).astype(float)
    return Z, wpos, 1.0 - wpos


def test_interrupt_inside_a_nested_search_stops_the_whole_search(monkeypatch):
    """Ctrl-C landing in a degenerate plane's sub-search must not be swallowed by it: the
    outer search stops, warns, and reports itself incomplete."""
    from exactclf._zero_one import _min01

    Z, wpos, wneg = _grid_instance()
    scan = _min01._Problem.scan
    nested = []

    def interrupting_scan(self, *args):
        if self.n < len(Z):  # a sub-problem: the points on one plane
            nested.append(self.n)
            raise KeyboardInterrupt
        return scan(self, *args)

    monkeypatch.setattr(_min01._Problem, "scan", interrupting_scan)
    with pytest.warns(RuntimeWarning, match="interrupted"):
        res = solve_min01(Z, wpos, wneg, incumbent=np.zeros(len(Z), dtype=bool))
    assert nested, "the instance must have a degenerate plane that needs a nested search"
    assert not res.complete and res.stop_reason == "interrupted"
    assert labeling_errors(res.positive, wpos, wneg) == res.value
    assert strictly_separable(Z, res.positive)


def test_incomplete_nested_search_makes_the_search_incomplete(monkeypatch):
    """A nested search stopped by the deadline reports it; the deadline is passed down."""
    from exactclf._zero_one import _min01

    Z, wpos, wneg = _grid_instance()
    solve = _min01._solve
    limits = []

    def stopping_solve(*args, **kw):
        out = solve(*args, **kw)
        if "cap" in kw:  # nested
            limits.append(kw.get("time_limit"))
            out.complete, out.stop_reason = False, "time_limit"
        return out

    monkeypatch.setattr(_min01, "_solve", stopping_solve)
    res = solve_min01(Z, wpos, wneg, time_limit=1e4,
                      incumbent=np.zeros(len(Z), dtype=bool))
    assert limits and all(t is not None and 0 < t <= 1e4 for t in limits)
    assert not res.complete and res.stop_reason == "time_limit"
    assert labeling_errors(res.positive, wpos, wneg) == res.value


#: per-feature changes of units that are exact in float64 on small integers, so that the
#: brute force can run on the untransformed points
AWKWARD_UNITS = {
    "none": lambda X: X,
    "offset 1e10": lambda X: X + 1e10,
    "offset one feature": lambda X: X + np.r_[1e10, np.zeros(X.shape[1] - 1)],
    "timestamps": lambda X: 1.7e9 + 60.0 * X,
    "scale 1e-200": lambda X: X * 2.0**-664,
    "scale 1e200": lambda X: X * 2.0**664,
    "mixed": lambda X: (X - 1e9) * 2.0 ** np.linspace(-600, 600, X.shape[1]),
}


def _awkward_samples(rng):
    """Samples (with duplicates, ties and zero weights) of one awkward kind of point set."""
    kind = rng.choice(["grid", "collinear", "flat", "thin", "ties"])
    d = int(rng.integers(1, 4))
    n = int(rng.integers(3, 9))
    if kind == "grid":
        X = rng.integers(0, 3, size=(n, d)).astype(float)
    elif kind == "collinear":
        X = rng.integers(-3, 4, size=(n, 1)) * rng.integers(-2, 3, size=(1, d)) + 1.0
    elif kind == "flat":
        X = rng.integers(-2, 3, size=(n, 2)) @ rng.integers(-2, 3, size=(2, d)) * 1.0
    elif kind == "thin":  # two long nearly parallel rows of points: thin cells
        t = rng.integers(0, 200, size=(n, 1))
        X = np.hstack([t, t // 100 + rng.integers(0, 2, size=(n, 1))] + [t] * (d - 1))
        X = X[:, : max(d, 2)].astype(float)
    else:  # ties: symmetric points with equal weights
        X = rng.integers(-1, 2, size=(n, d)).astype(float)
        X = np.vstack([X, -X])
    X = np.vstack([X, X[: int(rng.integers(0, 3))]])  # duplicates, maybe conflicting
    y = rng.integers(0, 2, size=len(X)).astype(bool)
    w = rng.integers(0, 3, size=len(X)).astype(float)
    w[rng.integers(len(X))] = 1.0
    return str(kind), X, y, w


@pytest.mark.parametrize("seed", range(16))
def test_awkward_data_matches_brute_force(seed):
    """Seeded fuzz: awkward point sets under awkward units, on solve_min01 and the estimator:
    the exact optimum (brute force on the untransformed points) or a clear error."""
    from exactclf import ICEClassifier
    from exactclf._base import merge_duplicates

    rng = np.random.default_rng(1000 + seed)
    kind, X, y, w = _awkward_samples(rng)
    keep = w > 0
    U, wpos, wneg, _ = merge_duplicates(X[keep], y[keep], w[keep])
    expected = brute_force_min01(U, wpos, wneg)
    for name, units in AWKWARD_UNITS.items():
        Xu = units(X)
        Uu, wpos_u, wneg_u, _ = merge_duplicates(Xu[keep], y[keep], w[keep])
        res = solve_min01(Uu, wpos_u, wneg_u)
        assert res.complete and res.value == expected, (kind, name)
        assert labeling_errors(res.positive, wpos_u, wneg_u) == expected
        if not (y[keep].any() and (~y[keep]).any()):
            continue  # the estimator needs both classes among the samples
        clf = ICEClassifier(device="cpu").fit(Xu, y, sample_weight=w)
        realized = float(w[clf.predict(Xu) != clf.classes_[y.astype(int)]].sum())
        assert clf.is_optimal_ and clf.training_errors_ == expected == realized, (kind, name)
