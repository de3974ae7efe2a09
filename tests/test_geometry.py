"""Affine frames: every geometric decision is invariant to a per-feature change of units, and a
direction dropped as rounding is checked in exact arithmetic on the float64 values."""

from fractions import Fraction

import numpy as np
import pytest

from exactclf._geometry import _dyadic_integers, _integer_null_space, affine_frame

UNITS = {
    "plain": lambda X: X,
    "offset one feature": lambda X: X + np.r_[1e10, np.zeros(X.shape[1] - 1)],
    "offset all features": lambda X: X + 1e10,
    "timestamps": lambda X: 1.7e9 + 60.0 * X,
    "tiny": lambda X: X * 1e-200,
    "huge": lambda X: X * 1e200,
    "mixed": lambda X: X * [2.0**-600, 1.0, 2.0**600] + [0.0, -3e5, 0.0],
}


def _points(kind, rng):
    if kind == "gaussian":
        return rng.normal(size=(25, 3))
    if kind == "grid":  # integers: exactly representable under every offset above
        return rng.integers(-3, 4, size=(25, 3)).astype(float)
    t = rng.integers(-4, 5, size=(25, 1)).astype(float)  # collinear, in 3-D
    return np.hstack([t, 2 * t + 1, -t])


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("kind, dim", [("gaussian", 3), ("grid", 3), ("collinear", 1)])
def test_dimension_and_frame_do_not_depend_on_units(units, kind, dim):
    X = _points(kind, np.random.default_rng(0))
    Xu = UNITS[units](X)
    ref, frame = affine_frame(X), affine_frame(Xu)
    assert ref.dim == frame.dim == dim
    # the same points in the frame, up to the orientation of its axes (and, for non-integer
    # data under an offset of 1e10, the rounding of the data itself: 2e-6)
    Zr, Zu = ref.transform(X), frame.transform(Xu)
    np.testing.assert_allclose(Zr @ Zr.T, Zu @ Zu.T, atol=1e-4 if kind == "gaussian" else 1e-9)
    # the points are the float64 values: x 1e-200 and x 1e200 round the collinear points
    # off their line (the other maps are exact on them), and a line could use that
    rounded = kind == "collinear" and units in ("tiny", "huge")
    assert frame.faithful == frame.certifiable == (not rounded)


def test_constant_feature_only_at_rounding_level():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(10, 2))
    X[:, 1] = 1e10 + rng.integers(0, 3, size=10)  # varies by 1 on top of 1e10: not constant
    assert affine_frame(X).dim == 2
    X[:, 1] = 0.1 * 3  # constant (its mean is not exactly representable)
    assert affine_frame(X).dim == 1
    assert affine_frame(X).faithful
    X[:, 1] = 1e10 * (1 + np.finfo(float).eps * rng.integers(0, 2, size=10))  # one ulp
    frame = affine_frame(X)
    # rounding noise for the frame, but two values a threshold separates: no certificate
    assert frame.dim == 1 and not frame.faithful
    frame = affine_frame(X[:, 1:])
    assert frame.dim == 0 and not frame.certifiable


def test_single_point_and_identical_rows_have_dimension_zero():
    assert affine_frame(np.array([[1.0, 2.0]])).dim == 0
    frame = affine_frame(np.full((4, 3), 1e10))
    assert frame.dim == 0 and frame.transform(np.full((4, 3), 1e10)).shape == (4, 0)
    assert affine_frame(np.zeros((3, 0))).dim == 0


def test_model_maps_back_to_the_original_units():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20, 2)) * [1e-200, 1.0] + [0.0, 1e10]
    frame = affine_frame(X)
    a, b = rng.normal(size=frame.dim), 0.3
    coef, intercept = frame.to_original(a, b)
    np.testing.assert_allclose(X @ coef + intercept, frame.transform(X) @ a + b, atol=1e-5)


def test_overflow_is_a_clear_error():
    X = np.array([[-1.7e308, 0.0], [1.7e308, 1.0], [1.7e308, 2.0]])
    with pytest.raises(ValueError, match="feature 0 overflow float64"):
        affine_frame(X)


# -- directions dropped as rounding, checked in exact rational arithmetic --------------------


def _two_lines(seed, gap, n=40):
    """Points on two parallel lines ``gap`` apart (one line if 0), rotated in float64."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(-1, 1, n)
    c, s = np.cos(0.3), np.sin(0.3)
    return np.c_[t, gap * (np.arange(n) % 2)] @ np.array([[c, s], [-s, c]])


@pytest.mark.parametrize("gap", [0.0, 3e-16, 1e-15, 3e-15])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_points_off_the_kept_subspace_are_not_certifiable(seed, gap):
    """The frame drops a direction 1e-16 of the widest as rounding, but the points (their
    float64 values) are not on one line, whatever its width: the projection is not the
    data. (A threshold of 4 eps on that width certified two lines 3e-16 apart.)"""
    frame = affine_frame(_two_lines(seed, gap))
    assert frame.dim == 1 and frame.cond == 1.0
    assert not frame.faithful and not frame.certifiable


def _exactly_rank_deficient(rng, n):
    G = rng.normal(size=(n, 3))
    ints = rng.integers(-20, 21, size=(n, 3)).astype(float)
    t = rng.integers(-50, 51, size=(n, 1)).astype(float)
    one_hot = np.eye(4)[rng.integers(0, 4, size=n)]
    stamps = 1.7e9 + 60 * ints[:, :1]
    return {
        "duplicated column": (np.c_[G, G[:, :1]], 3),
        "x and 2x": (np.c_[G, 2 * G[:, :1]], 3),
        "x and -x * 2**-30": (np.c_[G, -G[:, :1] * 2.0**-30], 3),
        "constant 0.1 * 3": (np.c_[G, np.full(n, 0.1 * 3)], 3),
        "one-hot": (np.c_[G, one_hot], 6),
        "integers, 3x + 1": (np.c_[ints, 3 * ints[:, :1] + 1], 3),
        "integers, x + y - z / 2": (np.c_[ints, ints[:, 0] + ints[:, 1] - ints[:, 2] / 2], 3),
        "integers + 1e10, duplicated": (np.c_[ints, ints[:, :1]] + 1e10, 3),
        "timestamps, duplicated": (np.c_[G, stamps, stamps], 4),
        "integer line": (t @ [[2.0, -1.0, 3.0]] + [1.0, 0.0, -7.0], 1),
        "integer plane": (ints[:, :2] @ rng.integers(-3, 4, size=(2, 5)), 2),
    }


@pytest.mark.parametrize("case", list(_exactly_rank_deficient(np.random.default_rng(0), 7)))
@pytest.mark.parametrize("n", [9, 2000])
def test_exactly_rank_deficient_points_keep_the_certificate(case, n):
    """Features that are exact affine combinations of others in float64 (copies, integer
    combinations, powers of two, one-hot blocks): the projection is the data."""
    X, dim = _exactly_rank_deficient(np.random.default_rng(n), n)[case]
    frame = affine_frame(np.unique(X, axis=0))
    assert frame.dim == dim and frame.faithful and frame.certifiable


def test_an_exact_copy_of_a_column_keeps_the_certificate_at_any_width():
    """The SVD puts a duplicated integer column of 2000 rows 9.9 eps wide: data to the
    former 4 eps threshold, which refused the certificate; it is exactly empty."""
    X = np.random.default_rng(3).integers(-20, 21, size=(2000, 2)).astype(float)
    frame = affine_frame(np.unique(np.c_[X, X[:, 0]], axis=0))
    assert frame.dim == 2 and frame.certifiable


@pytest.mark.parametrize("case", ["0.1 x", "x / 3", "3x + 1", "x - y", "decimals, x + y"])
def test_rounded_combinations_are_not_certifiable(case):
    """A feature that is a combination of others only up to rounding: the points are off
    the subspace by an ulp, which a hyperplane can use."""
    rng = np.random.default_rng(4)
    ints = rng.integers(-20, 21, size=(50, 2)).astype(float)
    G = rng.normal(size=(50, 2))
    D = np.round(G, 2)
    X = {"0.1 x": np.c_[ints, 0.1 * ints[:, 0]], "x / 3": np.c_[ints, ints[:, 0] / 3],
         "3x + 1": np.c_[G, 3 * G[:, 0] + 1], "x - y": np.c_[G, G[:, 0] - G[:, 1]],
         "decimals, x + y": np.c_[D, D[:, 0] + D[:, 1]]}[case]
    frame = affine_frame(X)
    assert frame.dim == 2 and not frame.faithful and not frame.certifiable


def test_one_point_one_ulp_off_among_many():
    """Every point is checked (the last one in the last block of the exact check)."""
    G = np.random.default_rng(5).normal(size=(9000, 3))
    X = np.c_[G, G[:, 1]]
    assert affine_frame(X).faithful
    X[-1, -1] = np.nextafter(X[-1, -1], np.inf)
    frame = affine_frame(X)
    assert frame.dim == 3 and not frame.faithful


def test_float64_values_are_exact_dyadic_integers():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(6, 5)) * [1.0, 1e-300, 1e300, 1.0, 1.0]
    X[:, 3] = rng.integers(-9, 10, size=6) * 4.0  # small integers: int64
    X[0, [0, 1, 2, 4]] = [-0.0, 5e-324, np.finfo(float).max, -(2.0**-1074)]
    X[1, 0] = 0.0
    for cols in ([3], slice(None)):
        ints, E = _dyadic_integers(X[:, cols])
        assert ints.dtype == (np.int64 if cols == [3] else object)
        for row, irow in zip(X[:, cols], ints, strict=True):
            for x, i, e in zip(row, irow, E, strict=True):
                assert Fraction(int(i)) * Fraction(2) ** int(e) == Fraction(float(x))
    assert _dyadic_integers(X[:, [3]])[0].max() <= 9  # the column's scale is taken out


def test_integer_null_space():
    A = [[1, 2, 3, 0], [2, 4, 7, 1]]
    basis = _integer_null_space(A, 4)
    assert len(basis) == 2 and all(isinstance(v, int) for b in basis for v in b)
    assert all(sum(a * v for a, v in zip(row, b, strict=True)) == 0 for row in A for b in basis)
    assert np.linalg.matrix_rank(np.array(basis, dtype=float)) == 2
    assert len(_integer_null_space([[1, 2, 3], [-2, -4, -6]], 3)) == 2  # dependent rows
