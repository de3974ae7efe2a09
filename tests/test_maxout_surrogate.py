"""The smooth surrogate of a maxout network (starts for the exact local search)."""

import time

import numpy as np
import pytest

from exactclf.maxout._exact import union_on
from exactclf.maxout._surrogate import anneal_union, smooth_union


def _slabs(seed, n=300):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 3))
    want = (np.abs(Z[:, 0] + 0.5 * Z[:, 1]) > 0.8).astype(float)
    return Z, want, 1.0 - want


def _errors(Z, planes, want):
    return int((union_on(Z, planes) != (want > 0)).sum())


@pytest.mark.parametrize("seed", range(4))
def test_two_slabs_are_found_by_two_planes(seed):
    """A union of two half-spaces labels the data: the surrogate's planes err on few
    points, far fewer than the best single plane can (the slabs lie on both sides)."""
    Z, want, other = _slabs(seed)
    planes = smooth_union(Z, want, other, 2, np.random.default_rng(seed))
    assert len(planes) == 2 and all(a.shape == (3,) for a, _ in planes)
    assert _errors(Z, planes, want) <= 0.05 * len(Z)
    one = smooth_union(Z, want, other, 1, np.random.default_rng(seed))
    assert _errors(Z, one, want) > 2 * _errors(Z, planes, want)


def test_invariances():
    """Same seed, same planes; weights scaled by a constant and features in other units
    (positive scale, offset) give the same labeling."""
    Z, want, other = _slabs(7)
    base = smooth_union(Z, want, other, 2, np.random.default_rng(3))
    again = smooth_union(Z, want, other, 2, np.random.default_rng(3))
    assert all(np.array_equal(a, c) and b == d for (a, b), (c, d) in zip(base, again, strict=True))
    scaled = smooth_union(Z, 1e-6 * want, 1e-6 * other, 2, np.random.default_rng(3))
    assert np.array_equal(union_on(Z, scaled), union_on(Z, base))
    units = np.array([1e3, 2.0, 1e-4])
    Zu = Z * units + np.array([1e5, -3.0, 0.0])
    moved = smooth_union(Zu, want, other, 2, np.random.default_rng(3))
    assert np.mean(union_on(Zu, moved) != union_on(Z, base)) <= 0.01


def test_a_past_deadline_stops_the_fit():
    Z, want, other = _slabs(1, n=2000)
    t0 = time.perf_counter()
    planes = smooth_union(Z, want, other, 3, np.random.default_rng(0), deadline=t0)
    assert len(planes) == 3 and all(np.all(np.isfinite(a)) for a, _ in planes)
    full = smooth_union(Z, want, other, 3, np.random.default_rng(0))
    assert _errors(Z, full, want) <= _errors(Z, planes, want)


@pytest.mark.parametrize("seed", range(4))
def test_annealing_errs_less_than_its_start_or_says_none(seed):
    """The annealed stages' best union errs less than the start, or there is none; from a
    random start on two slabs it does (the logistic fit's planes may already be optimal)."""
    Z, want, other = _slabs(seed)
    rng = np.random.default_rng(seed)
    start = [(rng.normal(size=3), float(rng.normal())) for _ in range(2)]
    annealed = anneal_union(Z, want, other, start)
    assert annealed is not None and _errors(Z, annealed, want) < _errors(Z, start, want)
    fitted = smooth_union(Z, want, other, 2, np.random.default_rng(seed))
    again = anneal_union(Z, want, other, fitted)
    assert again is None or _errors(Z, again, want) < _errors(Z, fitted, want)
    assert anneal_union(Z, want, other, fitted, deadline=time.perf_counter()) is None
