"""DeepICEMaxoutClassifier: exact unions of half-spaces, realized; coreset heuristic."""

import itertools

import numpy as np
import pytest
from _helpers import random_instance, strictly_separable
from sklearn.exceptions import ConvergenceWarning

from exactclf import DeepICEMaxoutClassifier
from exactclf._backend import REFERENCE
from exactclf._dichotomies import dichotomies
from exactclf.datasets import load_voicepath
from exactclf.linear import _min01
from exactclf.maxout import _deepice, _exact
from exactclf.maxout._exact import exact_union, union_errors


def _errors(clf, X, y, w=None):
    w = np.ones(len(y)) if w is None else w
    return float(w[clf.predict(X) != y].sum())


def _brute_force_union(Z, want_w, other_w, K):
    """Best union of K subsets, each proven separable by an LP (independent of the search)."""
    sep = [np.array(b) for b in itertools.product([False, True], repeat=len(Z))
           if strictly_separable(Z, np.array(b))]
    return min(union_errors(np.array(c), want_w, other_w)
               for c in itertools.combinations_with_replacement(sep, K))


@pytest.mark.parametrize("kind", ["gaussian", "grid", "collinear", "flat"])
@pytest.mark.parametrize("seed", range(4))
def test_dichotomies_are_exactly_the_separable_subsets(kind, seed):
    rng = np.random.default_rng(seed)
    Z, _, _ = random_instance(rng, kind, int(rng.integers(1, 8)), int(rng.integers(1, 4)))
    got = {r.tobytes() for r in dichotomies(Z)}
    brute = {np.array(b).tobytes() for b in itertools.product([False, True], repeat=len(Z))
             if strictly_separable(Z, np.array(b))}
    assert got == brute


@pytest.mark.parametrize("kind", ["gaussian", "grid", "collinear", "flat"])
@pytest.mark.parametrize("seed", range(4))
def test_exact_union_matches_brute_force(kind, seed):
    rng = np.random.default_rng(10 + seed)
    Z, wpos, wneg = random_instance(rng, kind, int(rng.integers(2, 7)), int(rng.integers(1, 4)))
    for K in (1, 2, 3):
        for want_w, other_w in ((wpos, wneg), (wneg, wpos)):
            res = exact_union(Z, want_w, other_w, K)
            assert res.complete
            assert res.value == _brute_force_union(Z, want_w, other_w, K)
            assert union_errors(res.sets, want_w, other_w) == res.value
            assert all(strictly_separable(Z, s) for s in res.sets)


@pytest.mark.parametrize("seed", range(4))
def test_estimator_realizes_the_exact_optimum_with_duplicates(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(7, 2)).astype(float)
    X = np.vstack([X, X[:2]])  # duplicates, possibly with conflicting labels
    y = rng.integers(0, 2, size=len(X))
    clf = DeepICEMaxoutClassifier(n_hyperplanes=2, device="cpu").fit(X, y)
    U, inverse = np.unique(X, axis=0, return_inverse=True)
    wpos = np.bincount(inverse, weights=y == 1, minlength=len(U))
    wneg = np.bincount(inverse, weights=y == 0, minlength=len(U))
    best = min(_brute_force_union(U, wpos, wneg, 2), _brute_force_union(U, wneg, wpos, 2))
    assert clf.is_optimal_ and clf.training_errors_ == best == _errors(clf, X, y)
    assert clf.hyperplanes_.shape == (2, 3) and clf.polarity_ in (1, -1)


def test_relabeling_does_not_change_the_optimum():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (np.abs(X[:, 0]) + 0.2 * rng.normal(size=40) > 0.7).astype(int)  # a slab: K = 2
    a = DeepICEMaxoutClassifier(device="cpu").fit(X, y)
    b = DeepICEMaxoutClassifier(device="cpu").fit(X, 1 - y)
    assert a.training_errors_ == b.training_errors_ == _errors(a, X, y)
    assert a.polarity_ == -b.polarity_


@pytest.mark.parametrize("K", [2, 3])
def test_parallel_returns_the_same_network(K):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = ((X**2).sum(axis=1) + 0.3 * rng.normal(size=60) > 1.2).astype(int)
    a = DeepICEMaxoutClassifier(n_hyperplanes=K, device="cpu").fit(X, y)
    b = DeepICEMaxoutClassifier(n_hyperplanes=K, device="cpu", n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(a.hyperplanes_, b.hyperplanes_)
    assert a.polarity_ == b.polarity_ and a.training_errors_ == b.training_errors_
    assert a.is_optimal_ and a.training_errors_ == _errors(a, X, y)


@pytest.mark.parametrize("kind", ["gaussian", "grid", "collinear", "flat"])
@pytest.mark.parametrize("seed", range(3))
def test_array_path_returns_the_cpu_subsets(kind, seed):
    """The GPU code path (array-generic, run on NumPy) and the bitset kernel pick the same
    K-tuple, ties included, on general and degenerate instances of a few dozen points."""
    rng = np.random.default_rng(20 + seed)
    Z, wpos, wneg = random_instance(rng, kind, int(rng.integers(8, 25)),
                                    int(rng.integers(1, 4)))
    for K in (1, 2, 3):
        for want_w, other_w in ((wpos, wneg), (wneg, wpos)):
            cpu = exact_union(Z, want_w, other_w, K)
            ref = exact_union(Z, want_w, other_w, K, backend=REFERENCE)
            assert cpu.complete and ref.complete and cpu.value == ref.value
            np.testing.assert_array_equal(cpu.sets, ref.sets)


def test_array_path_with_a_budget_and_parallel_chunks():
    """Truncated family (max_planes) and two workers: still the CPU kernel's answer."""
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(30, 2))
    want = (np.abs(Z[:, 0]) > 0.6).astype(float)
    cpu = exact_union(Z, want, 1 - want, 2, max_planes=200)
    ref = exact_union(Z, want, 1 - want, 2, max_planes=200, backend=REFERENCE, n_jobs=2)
    assert not cpu.complete and not ref.complete and cpu.value == ref.value
    np.testing.assert_array_equal(cpu.sets, ref.sets)


@pytest.mark.parametrize("K", [1, 2])
def test_estimator_on_the_gpu_path(monkeypatch, K):
    """device="gpu" runs the array-generic code; with NumPy standing in for CuPy it must
    return the CPU model exactly."""
    X, y = load_voicepath(return_X_y=True)
    X, y = X[::12], y[::12]
    cpu = DeepICEMaxoutClassifier(n_hyperplanes=K, device="cpu").fit(X, y)
    monkeypatch.setattr(_deepice, "resolve_device", lambda device: REFERENCE)
    # count the calls of the array-generic kernels, so the test fails if they are bypassed
    module, name = (_min01, "ice_scan_array") if K == 1 else (_exact, "union_search_array")
    calls, kernel = [], getattr(module, name)
    monkeypatch.setattr(module, name, lambda *args: calls.append(1) or kernel(*args))
    ref = DeepICEMaxoutClassifier(n_hyperplanes=K, device="gpu").fit(X, y)
    assert calls and cpu.is_optimal_ and ref.is_optimal_
    np.testing.assert_array_equal(cpu.hyperplanes_, ref.hyperplanes_)
    assert cpu.polarity_ == ref.polarity_
    assert ref.training_errors_ == cpu.training_errors_ == _errors(ref, X, y)


def test_coreset_on_voicepath_with_a_proven_lower_bound():
    X, y = load_voicepath(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="not proven"):
        clf = DeepICEMaxoutClassifier(method="coreset", random_state=0, device="cpu").fit(X, y)
    # K=2 optimum on Voicepath is 16 errors (Deep-ICE paper): no network can do better
    assert 16 <= clf.training_errors_ <= 19 and clf.training_errors_ == _errors(clf, X, y)
    assert clf.lower_bound_ <= 16 and clf.method_ == "coreset"


def test_budget_and_bad_input():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    with pytest.warns(ConvergenceWarning):
        clf = DeepICEMaxoutClassifier(max_candidates=50, device="cpu").fit(X, y)
    assert not clf.is_optimal_ and clf.training_errors_ == _errors(clf, X, y)
    with pytest.raises(ValueError, match="integer sample weights"):
        DeepICEMaxoutClassifier().fit(X, y, sample_weight=np.full(30, 0.5))
    with pytest.raises(ValueError, match="Only binary"):
        DeepICEMaxoutClassifier().fit(X, np.arange(30) % 3)


def test_exact_union_upper_bound():
    """Below the bound: the unbounded answer; at the optimum: nothing better, proven."""
    rng = np.random.default_rng(4)
    Z = rng.normal(size=(25, 2))
    want = (np.abs(Z[:, 1]) > 0.5).astype(float)
    free = exact_union(Z, want, 1 - want, 2)
    above = exact_union(Z, want, 1 - want, 2, upper_bound=free.value + 1)
    at = exact_union(Z, want, 1 - want, 2, upper_bound=free.value)
    assert above.value == free.value and np.array_equal(above.sets, free.sets)
    assert at.complete and at.value >= free.value
    assert at.value == min(want.sum(), (1 - want).sum())  # the best constant network
