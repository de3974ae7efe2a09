"""MRCCCG with the log loss: certified bounds against an independent convex solve.

The reference minimizes ``R(mu) = -tau^T mu + lambda^T |mu| + max_i LSE(Phi(x_i, .)^T mu)``
from its definition with SciPy's SLSQP on the epigraph form (``mu = mu1 - mu2``, one smooth
constraint ``nu >= LSE_i`` per sample), not with the package's cone programs.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _helpers import hide_module
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError
from test_mrc import _data, _psi

import exactclf.mrc._log as log_module
from exactclf.mrc import MRCCCG

EXACT_LOG = dict(loss="log", eps1=1e-7, tol=1e-9, random_state=0)


def _reference_log(Psi, y, B, s):
    """min R(mu) for Phi(x, c) = B[c] (x) psi(x) (columns scaled by their largest
    magnitude; R* does not change)."""
    Psi = np.asarray(Psi, dtype=np.float64)
    top = np.abs(Psi).max(axis=0)
    Psi = Psi / np.where(top > 0, top, 1.0)
    n, d = Psi.shape
    K, q = B.shape
    m = q * d
    Phi = np.stack([np.kron(B[c], Psi) for c in range(K)], axis=1)  # n x K x m
    Phi_true = Phi[np.arange(n), y]
    tau, lam = Phi_true.mean(axis=0), s * Phi_true.std(axis=0) / np.sqrt(n)
    c = np.r_[-(tau - lam), tau + lam, 1.0]

    def lse(x):
        return logsumexp(Phi @ (x[:m] - x[m:2 * m]), axis=1)

    def lse_jac(x):
        P = softmax(Phi @ (x[:m] - x[m:2 * m]), axis=1)
        G = np.einsum("ik,ikj->ij", P, Phi)
        return np.c_[-G, G, np.ones(n)]  # of nu - LSE_i

    best = np.inf
    for start in (np.zeros(2 * m), np.full(2 * m, 0.1)):
        x0 = np.r_[start, lse(np.r_[start, 0.0]).max() + 1.0]
        res = minimize(lambda x: c @ x, x0, jac=lambda x: c, method="SLSQP",
                       constraints=[dict(type="ineq", fun=lambda x: x[-1] - lse(x),
                                         jac=lse_jac)],
                       bounds=[(0, None)] * (2 * m) + [(None, None)],
                       options=dict(ftol=1e-13, maxiter=2000))
        x = res.x
        mu = x[:m] - x[m:2 * m]
        # the value of R at the reference's point, feasible by construction
        best = min(best, -tau @ mu + lam @ np.abs(mu) + lse(x).max())
    return best


@pytest.mark.parametrize("seed, K, phi, one_hot", [
    (0, 2, "linear", True), (1, 3, "linear", True), (2, 4, "linear", True),
    (3, 2, "linear", False), (4, 3, "threshold", True), (6, 2, "threshold", True),
    (5, 2, "fourier", False)])
def test_log_loss_bounds_bracket_an_independent_convex_solve(seed, K, phi, one_hot):
    X, y = _data(40, K, d=3, seed=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = MRCCCG(phi=phi, n_components=6, one_hot=one_hot, n_max=8, **EXACT_LOG).fit(X, y)
    B = np.eye(K) if clf.label_embedding_ is None else clf.label_embedding_
    R_ref = _reference_log(_psi(clf, X), y, B, clf.s)
    assert clf.converged_ and clf.n_iter_ > 1
    assert clf.lower_ <= R_ref + 1e-7  # the certified lower bound is below the optimum
    assert clf.upper_ <= R_ref + 1e-5  # and the returned rule is (nearly) optimal
    if np.all(clf.lambda_ > 0):
        assert clf.lower_ <= clf.upper_ <= clf.lower_ + 1e-5
    else:
        # named limitation: with lambda_j = 0 the optimum can lie at infinity (|mu_j| grows
        # without bound) and the certified lower bound may stay loose; the fit says so
        assert clf.lower_ <= clf.upper_
        if not clf.certificate_.is_optimal:
            assert any("lambda_ is 0" in str(w.message) for w in caught)
    # upper_ is R(mu_) from the definition
    Psi = _psi(clf, X)
    V = Psi @ (B @ clf.mu_.reshape(B.shape[1], -1)).T
    Phi_true = np.stack([np.kron(B[c], Psi) for c in range(K)], axis=1)[np.arange(len(y)), y]
    R = -clf.tau_ @ clf.mu_ + clf.lambda_ @ np.abs(clf.mu_) + logsumexp(V, axis=1).max()
    assert clf.upper_ == pytest.approx(R, abs=1e-9)
    np.testing.assert_allclose(clf.tau_, Phi_true.mean(axis=0), atol=1e-12)
    # the softmax rule; its training log loss is sandwiched by the rule's bounds
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba, softmax(V, axis=1), atol=1e-12)
    log_loss = -np.log(proba[np.arange(len(y)), y]).mean()
    assert 0.0 <= clf.get_lower_bound() <= log_loss + 1e-9 <= clf.get_upper_bound() + 2e-9
    with pytest.raises(ValueError, match="deterministic"):
        clf.get_lower_bound("deterministic")


def test_log_loss_weights_sparse_and_duplicates():
    X, y = _data(30, 3, d=3, seed=9)
    w = np.r_[np.ones(15, dtype=int), np.full(15, 2)]
    a = MRCCCG(**EXACT_LOG).fit(sp.csr_matrix(X), y, sample_weight=w)
    b = MRCCCG(**EXACT_LOG).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert abs(a.upper_ - b.upper_) < 1e-6
    assert a.lower_ <= b.upper_ + 1e-9 and b.lower_ <= a.upper_ + 1e-9


@pytest.mark.parametrize("k", [1, 3])
def test_log_loss_interrupt_keeps_a_certified_model(k, monkeypatch):
    real = log_module._solve_restricted
    calls = []

    def solve(*args):
        calls.append(1)
        if len(calls) == k:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(log_module, "_solve_restricted", solve)
    X, y = _data(60, 3, d=3, seed=1)
    with pytest.warns(ConvergenceWarning, match="interrupt"):
        clf = MRCCCG(n_max=3, **EXACT_LOG).fit(X, y)
    assert clf.stop_reason_ == "interrupted" and clf.n_iter_ == k - 1
    R_ref = _reference_log(_psi(clf, X), y, np.eye(3), clf.s)
    assert clf.lower_ <= R_ref + 1e-7 <= clf.upper_ + 2e-7
    if k == 1:
        assert clf.upper_ == pytest.approx(np.log(3))  # the uniform rule


def test_log_loss_bad_input(monkeypatch):
    X, y = _data(30, 2)
    with pytest.raises(InvalidParameterError, match="loss"):
        MRCCCG(loss="hinge").fit(X, y)
    hide_module(monkeypatch, "clarabel")
    with pytest.raises(ImportError, match="pip install clarabel"):
        MRCCCG(loss="log").fit(X, y)


def test_log_loss_time_limit_keeps_a_certified_model():
    X, y = _data(60, 3, d=3, seed=2)
    with pytest.warns(ConvergenceWarning, match="time_limit"):
        clf = MRCCCG(time_limit=1e-9, **EXACT_LOG).fit(X, y)
    assert clf.stop_reason_ == "time_limit" and clf.n_iter_ == 0
    assert clf.upper_ == pytest.approx(np.log(3))
    assert 0.0 <= clf.lower_ <= _reference_log(_psi(clf, X), y, np.eye(3), clf.s) + 1e-7
    np.testing.assert_allclose(clf.predict_proba(X), 1.0 / 3.0)
