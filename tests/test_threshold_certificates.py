"""The logistic and hinge certificates against independent solvers on small exact problems.

The estimator's ``objective_ - dual_gap_`` is a claimed lower bound on the optimum over all
networks (exact dictionary); an independent solver's optimum must not lie below it, and the
returned objective must be within the certified gap of it. Independent references: the
logistic Lasso as a bound-constrained smooth program (``w = u - v``, ``u, v >= 0``) solved by
L-BFGS-B; the hinge Lasso as a linear program solved by Clarabel (an interior-point conic
solver, not the HiGHS simplex the estimator uses).
"""

import clarabel
import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import minimize

from exactclf.threshold import ThresholdNetLasso
from exactclf.threshold._arrangements import exact_patterns


def _instance(seed, n=9):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    if seed % 2:  # integer grid: collinear points and ties
        X = np.round(2 * X)
        X = np.unique(X, axis=0)
    y = rng.integers(0, 2, len(X))
    y[:2] = [0, 1]
    s = rng.uniform(0.5, 2.0, len(X)) if seed % 3 == 0 else np.ones(len(X))
    return X, y, s


def _dictionary(X):
    # exact_patterns enumerates the dichotomies of the distinct points (checked against a
    # brute force of LPs in test_threshold.py); X here has distinct rows
    return exact_patterns(X).patterns.astype(float)


def logistic_reference(D, t, beta, s):
    """``min sum s log(1 + exp(-t D w)) + beta |w|_1`` with ``w = u - v``, by L-BFGS-B."""
    P = D.shape[1]

    def f(z):
        w = z[:P] - z[P:]
        m = t * (D @ w)
        val = np.sum(s * np.logaddexp(0.0, -m)) + beta * z.sum()
        g = D.T @ (-s * t * 0.5 * (1.0 - np.tanh(0.5 * m)))
        return val, np.concatenate([g + beta, -g + beta])

    res = minimize(f, np.zeros(2 * P), jac=True, method="L-BFGS-B",
                   bounds=[(0, None)] * (2 * P),
                   options={"maxiter": 100000, "ftol": 1e-15, "gtol": 1e-12})
    return float(res.fun)


def hinge_reference(D, t, beta, s):
    """``min beta 1.(u + v) + s.xi`` s.t. ``xi >= 1 - t (D (u - v))``, all >= 0, by
    Clarabel."""
    n, P = D.shape
    TD = D * t[:, None]
    A = sparse.vstack([sparse.hstack([-TD, TD, -sparse.identity(n)]),
                       -sparse.identity(2 * P + n)], format="csc")
    b = np.concatenate([-np.ones(n), np.zeros(2 * P + n)])
    q = np.concatenate([np.full(2 * P, beta), s])
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = 1e-10
    settings.tol_feas = 1e-10
    sol = clarabel.DefaultSolver(sparse.csc_matrix((len(q), len(q))), q, A, b,
                                 [clarabel.NonnegativeConeT(len(b))], settings).solve()
    assert str(sol.status) == "Solved"
    return float(sol.obj_val)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("beta", [0.03, 0.5])
@pytest.mark.parametrize("solver", ["auto", "sklearn"])
def test_logistic_certificate_against_lbfgs(seed, beta, solver):
    X, y, s = _instance(seed)
    if solver == "auto" and seed % 3 == 0:
        solver = "sklearn"  # skglm has no weighted logistic loss
    clf = ThresholdNetLasso(beta=beta, loss="logistic", arrangements="exact", solver=solver,
                            tol=1e-7, max_iter=100000).fit(X, y, sample_weight=s)
    opt = logistic_reference(_dictionary(X), 2.0 * y - 1.0, beta, s)
    # opt is an (upper) estimate of the optimum within L-BFGS-B's accuracy
    assert clf.objective_ - clf.dual_gap_ <= opt + 1e-9
    assert clf.objective_ <= opt + clf.dual_gap_ + 1e-9
    assert clf.is_optimal_ and clf.dual_gap_ <= 1e-7 * np.log(2) * s.sum()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("beta", [0.03, 0.5, 3.0])
def test_hinge_certificate_against_clarabel(seed, beta):
    X, y, s = _instance(seed)
    clf = ThresholdNetLasso(beta=beta, loss="hinge", arrangements="exact").fit(
        X, y, sample_weight=s)
    opt = hinge_reference(_dictionary(X), 2.0 * y - 1.0, beta, s)
    atol = 1e-7 * (1.0 + abs(opt))  # Clarabel's optimum is accurate to its tolerances
    assert clf.objective_ - clf.dual_gap_ <= opt + atol
    assert abs(clf.objective_ - opt) <= clf.dual_gap_ + atol
    assert clf.is_optimal_
