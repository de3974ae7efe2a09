"""Affine frames: every geometric decision is invariant to a per-feature change of units."""

import numpy as np
import pytest

from exactclf._geometry import affine_frame

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


def test_constant_feature_only_at_rounding_level():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(10, 2))
    X[:, 1] = 1e10 + rng.integers(0, 3, size=10)  # varies by 1 on top of 1e10: not constant
    assert affine_frame(X).dim == 2
    X[:, 1] = 0.1 * 3  # constant (its mean is not exactly representable)
    assert affine_frame(X).dim == 1
    X[:, 1] = 1e10 * (1 + np.finfo(float).eps * rng.integers(0, 2, size=10))  # one ulp
    assert affine_frame(X).dim == 1


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
