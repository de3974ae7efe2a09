"""The rotational sweep of lines in the plane against the enumeration and a brute force."""

import itertools

import numpy as np
import pytest
from _helpers import brute_force_min01

from exactclf._base import merge_duplicates
from exactclf._geometry import affine_frame
from exactclf._separator import max_margin_separator
from exactclf._zero_one._min01 import labeling_errors, solve_min01
from exactclf._zero_one._sweep import best_line


def _points(kind: str, n: int, rng):
    if kind == "gauss":
        return rng.normal(size=(n, 2))
    if kind == "grid":  # ties, collinear triples, lines through many points
        return rng.integers(0, 4, size=(n, 2)).astype(float)
    if kind == "stretched grid":
        return rng.integers(0, 3, size=(n, 2)) * np.array([1.0, 2.0]) + 1e6
    t = rng.normal(size=n)  # two parallel lines
    return np.c_[t, 2 * t + rng.integers(0, 2, n)]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("kind", ["gauss", "grid", "stretched grid", "two lines"])
def test_sweep_finds_the_optimum_and_a_labeling_that_realizes_it(kind, seed):
    rng = np.random.default_rng(seed)
    frame = None
    while frame is None or frame.dim < 2:  # the sweep is for points spanning the plane
        n = int(rng.integers(3, 30))
        X = _points(kind, n, rng)
        y = rng.integers(0, 2, n) == 1
        w = rng.integers(1, 4, n) * (0.5 if seed % 2 else 1.0)
        U, wpos, wneg, _ = merge_duplicates(X, y, w)
        frame = affine_frame(U)
    Z = frame.transform(U)
    value, positive = best_line(Z, wpos, wneg)
    assert value == pytest.approx(solve_min01(Z, wpos, wneg).value, rel=1e-12, abs=1e-12)
    assert labeling_errors(positive, wpos, wneg) == pytest.approx(value, rel=1e-12, abs=1e-12)
    a, b = max_margin_separator(Z, positive)
    assert np.array_equal(Z @ a + b > 0, positive)
    if len(U) <= 8:
        assert value == pytest.approx(brute_force_min01(U, wpos, wneg), rel=1e-12, abs=1e-12)


def test_xor_and_points_on_one_line_through_the_pivot():
    Z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0], [3.0, 0.0]])
    for labels in itertools.product([0, 1], repeat=len(Z)):
        lab = np.array(labels, bool)
        value, positive = best_line(Z, lab.astype(float), (~lab).astype(float))
        assert value == solve_min01(Z, lab.astype(float), (~lab).astype(float)).value
        assert labeling_errors(positive, lab.astype(float), (~lab).astype(float)) == value
