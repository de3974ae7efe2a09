"""DeepICEMaxoutClassifier: exact unions of half-spaces, realized; coreset heuristic."""

import itertools

import numpy as np
import pytest
from _helpers import random_instance, strictly_separable
from sklearn.exceptions import ConvergenceWarning

from exactclf import DeepICEMaxoutClassifier
from exactclf._dichotomies import dichotomies
from exactclf.datasets import load_voicepath
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


def test_parallel_returns_the_same_network():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = ((X**2).sum(axis=1) + 0.3 * rng.normal(size=60) > 1.2).astype(int)
    a = DeepICEMaxoutClassifier(n_hyperplanes=3, device="cpu").fit(X, y)
    b = DeepICEMaxoutClassifier(n_hyperplanes=3, device="cpu", n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(a.hyperplanes_, b.hyperplanes_)
    assert a.is_optimal_ and a.training_errors_ == _errors(a, X, y)


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
