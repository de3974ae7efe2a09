"""The realizing step: ``max_margin_separator`` returns a plane whose float64 signs are exactly
the labeling (thin margins included), of maximum margin, or raises ``UnrealizableLabeling``
with the best plane it found."""

import numpy as np
import pytest
from _helpers import random_instance, strictly_separable
from scipy.optimize import linprog, minimize, nnls

from exactclf._geometry import affine_frame
from exactclf._separator import UnrealizableLabeling, max_margin_separator


def lifted_rows(Z, positive):
    s = np.where(positive, 1.0, -1.0)
    return np.hstack([Z, np.ones((len(Z), 1))]) * s[:, None]


def assert_realizes(Z, positive, a, b):
    f = Z @ a + b
    assert np.all(f != 0.0)
    np.testing.assert_array_equal(f > 0, positive)


def normalized_margin(Z, positive, a, b):
    """Margin of the lifted plane ``(a, b)``: ``min_i s_i (a . z_i + b) / |(a, b)|``."""
    x = np.r_[a, b]
    return float((lifted_rows(Z, positive) @ x).min() / np.linalg.norm(x))


def thin_instance(seed, n, d, delta):
    """Gaussian points, labels by the side of a random plane, a third of them pushed to
    within ``delta``..``2 delta`` of it (on their own side), then framed like a search's
    points. Returns the framed points, the labels and the generating plane in the frame."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    c = 0.3 * rng.normal()
    f = X @ w + c
    near = rng.random(n) < 1 / 3
    X[near] -= np.outer(f[near] - np.sign(f[near]) * delta * rng.uniform(1, 2, near.sum()), w)
    positive = f > 0
    frame = affine_frame(X)
    Z = frame.transform(X)
    a_true = np.linalg.pinv(frame.basis) @ (w * frame.scale) * frame.norm
    b_true = float(w @ frame.mean + c)
    return Z, positive, a_true, b_true


@pytest.mark.parametrize("d", [1, 2, 3, 5])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-7, 1e-9, 1e-11, 1e-13])
def test_thin_margins_are_realized_with_the_maximum_margin(d, delta):
    """Regression (issue 13 item 4): the least-distance solve alone raised 'not strictly
    linearly separable' on every one of these from delta = 1e-5 on."""
    for seed in range(4):
        Z, positive, a_true, b_true = thin_instance(seed, 120, d, delta)
        assert_realizes(Z, positive, a_true, b_true)  # the instance is what it claims
        a, b = max_margin_separator(Z, positive)
        assert_realizes(Z, positive, a, b)
        # no other separator has a larger margin (up to the rounding of thin margins)
        assert normalized_margin(Z, positive, a, b) >= (
            normalized_margin(Z, positive, a_true, b_true) * (1 - 1e-2))


@pytest.mark.parametrize("seed", range(6))
def test_below_float64_resolution_never_returns_a_wrong_plane(seed):
    """At margins of 1e-16 the labeling is often not realizable in float64 at all (the
    generating plane itself gets signs wrong): a plane comes back only if it is right."""
    Z, positive, _, _ = thin_instance(seed, 120, 2, 1e-16)
    try:
        a, b = max_margin_separator(Z, positive)
    except UnrealizableLabeling as exc:
        a, b = exc.plane
        np.testing.assert_array_equal(exc.realized, Z @ a + b > 0)
        assert exc.n_disagreements == int(np.sum((Z @ a + b > 0) != positive))
        assert exc.n_disagreements < len(Z) / 2
    else:
        assert_realizes(Z, positive, a, b)


def qp_reference(G):
    """``min |x|^2 s.t. G x >= 1`` by SLSQP from an LP-feasible start (independent code)."""
    m = G.shape[1]
    lp = linprog(np.zeros(m), A_ub=-G, b_ub=-np.ones(len(G)), bounds=[(None, None)] * m,
                 method="highs")
    res = minimize(lambda x: x @ x, lp.x, jac=lambda x: 2 * x, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda x: G @ x - 1, "jac": lambda x: G}],
                   options={"ftol": 1e-14, "maxiter": 500})
    return res.x


@pytest.mark.parametrize("kind", ["gaussian", "grid", "collinear", "flat"])
@pytest.mark.parametrize("seed", range(6))
def test_the_hard_margin_plane_of_ordinary_data(kind, seed):
    """On ordinary margins: the plane is the hard-margin one (KKT certificate, and the same
    plane as an independent QP solve); integer grids bring ties (several support vectors
    more than the dimension), collinear and flat sets rows that do not span the space."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 5))
    Z, _, _ = random_instance(rng, kind, 40, d)
    proj = Z @ rng.normal(size=Z.shape[1])
    positive = proj > np.median(proj)
    if positive.all() or not positive.any():
        positive = proj > proj.min()
    a, b = max_margin_separator(Z, positive)
    assert_realizes(Z, positive, a, b)
    G = lifted_rows(Z, positive)
    x = np.r_[a, b]
    margins = G @ x
    assert margins.min() >= 1 - 1e-9
    active = margins <= 1 + 1e-7
    assert active.any()
    _, resid = nnls(G[active].T, x)  # x = G_A^T alpha with alpha >= 0: optimal
    assert resid <= 1e-7 * np.linalg.norm(x)
    ref = qp_reference(G)
    np.testing.assert_allclose(x, ref, rtol=1e-5, atol=1e-5 * np.linalg.norm(ref))


@pytest.mark.parametrize("seed", range(4))
def test_every_separable_labeling_of_a_small_grid(seed):
    """All labelings of a few integer-grid points (ties, collinear triples): the separable
    ones (by an independent LP) are realized exactly, the others raise with a plane whose
    reported labeling is the one it realizes."""
    rng = np.random.default_rng(seed)
    Z = np.unique(rng.integers(0, 3, size=(6, 2)).astype(float), axis=0)
    n = len(Z)
    n_separable = 0
    for bits in range(1, 2**n - 1):
        positive = np.array([(bits >> i) & 1 for i in range(n)], dtype=bool)
        if strictly_separable(Z, positive):
            n_separable += 1
            a, b = max_margin_separator(Z, positive)
            assert_realizes(Z, positive, a, b)
        else:
            with pytest.raises(UnrealizableLabeling) as info:
                max_margin_separator(Z, positive)
            a, b = info.value.plane
            np.testing.assert_array_equal(info.value.realized, Z @ a + b > 0)
            assert info.value.n_disagreements >= 1
    assert n_separable >= n


@pytest.mark.parametrize("offset, scale", [(1e10, 1.0), (0.0, 1e-200), (0.0, 1e200)])
def test_units_do_not_matter_after_the_frame(offset, scale):
    """Points with a huge offset or tiny/huge units, framed as a search frames them: the
    plane realizes the labeling; the thin case too."""
    for delta in (1e-2, 1e-6):
        Z0, positive, _, _ = thin_instance(3, 80, 3, delta)
        X = Z0 * scale + offset
        Z = affine_frame(X).transform(X)
        a, b = max_margin_separator(Z, positive)
        assert_realizes(Z, positive, a, b)


def test_unscaled_points_with_thin_margin():
    """The function works on points that are not in a frame (tiny spread, thin margin)."""
    Z, positive, _, _ = thin_instance(5, 60, 2, 1e-9)
    for factor in (1e-6, 1e6):
        a, b = max_margin_separator(Z * factor, positive)
        assert_realizes(Z * factor, positive, a, b)


def test_constant_labelings_and_no_dimension():
    Z = np.array([[0.0, 1.0], [2.0, 3.0]])
    for positive in (np.array([True, True]), np.array([False, False])):
        a, b = max_margin_separator(Z, positive)
        assert_realizes(Z, positive, a, b)
    a, b = max_margin_separator(np.zeros((1, 0)), np.array([True]))
    assert a.shape == (0,) and b > 0


def test_an_inseparable_labeling_raises_the_dedicated_exception():
    """XOR: UnrealizableLabeling (a RuntimeError, for callers that catch that) with the
    best plane found and the labeling it realizes (one point of four on the wrong side)."""
    Z = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    positive = np.array([True, True, False, False])
    with pytest.raises(RuntimeError, match="not strictly linearly separable") as info:
        max_margin_separator(Z, positive)
    exc = info.value
    assert isinstance(exc, UnrealizableLabeling)
    a, b = exc.plane
    np.testing.assert_array_equal(exc.realized, Z @ a + b > 0)
    assert exc.n_disagreements == int(np.sum((Z @ a + b > 0) != positive))
    assert 1 <= exc.n_disagreements <= 2


@pytest.mark.slow
def test_threshold_exact_arrangement_that_crashed():
    """End to end (issue 13 item 4): on this random 150x2 set ThresholdNetLasso with exact
    arrangements asked for the separator of a thin-margin pattern and stopped with
    'not strictly linearly separable'; now the network reproduces every pattern."""
    from exactclf import ThresholdNetLasso

    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=150) > 0).astype(int)
    model = ThresholdNetLasso(arrangements="exact").fit(X, y)
    assert np.isfinite(model.objective_)
    assert model.predict(X).shape == y.shape
