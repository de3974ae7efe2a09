"""A smooth surrogate of the maxout network: starts for the exact local search.

The network labels a point as the union's class when ``max_k (a_k . z + b_k) > 0``. Its 0-1
loss is piecewise constant; replacing the max by the log-sum-exp ``f(z) = log sum_k
exp(a_k . z + b_k)`` (at most ``log K`` above it) and the 0-1 loss by the logistic loss gives
a smooth objective

    L(a, b) = [sum_i want_i softplus(-f(z_i)) + other_i softplus(f(z_i))] / sum_i (want_i +
    other_i) + ridge / 2 * sum_k |a_k|^2

on standardized features, minimized by L-BFGS from a random start. It is not convex (a
maxout of K >= 2 planes is not), so each start lands in its own local minimum; its planes
are a start for :func:`~exactclf.maxout._coreset.refine`, which re-solves one half-space at a
time exactly. It plays for K >= 2 the part LinearSVC and LogisticRegression play for one
plane: on the Deep-ICE paper's larger sets the 60 s fit's network came from it on three of
five (auction_verification K = 2: 142 errors, 204 before; ``benchmarks/results/table2.txt``).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, logsumexp

__all__ = ["smooth_union"]

#: L2 penalty on the normals (standardized features, loss averaged over the weights)
_RIDGE = 1e-3
#: scale of the random start's coefficients (standardized features)
_START_SCALE = 0.5
#: L-BFGS iterations per start
_MAX_ITER = 500


def smooth_union(Z: np.ndarray, want_w: np.ndarray, other_w: np.ndarray, K: int,
                 rng: np.random.Generator, deadline: float | None = None,
                 ) -> list[tuple[np.ndarray, float]]:
    """K planes ``(a, b)`` in the coordinates of ``Z`` from one random start of the smooth
    surrogate (see the module docstring), stopped at ``deadline`` (a ``time.perf_counter()``
    value) if it comes first.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(200, 2))
    >>> want = (np.abs(Z[:, 0]) > 1).astype(float)  # two slabs: one plane each
    >>> planes = smooth_union(Z, want, 1 - want, 2, np.random.default_rng(1))
    >>> inside = np.any([Z @ a + b > 0 for a, b in planes], axis=0)
    >>> int((inside != (want > 0)).sum()) <= 10
    True
    """
    Z = np.asarray(Z, dtype=np.float64)
    n, d = Z.shape
    mean = Z.mean(axis=0)
    std = Z.std(axis=0)
    std[std == 0] = 1.0
    S = np.c_[(Z - mean) / std, np.ones(n)]
    total = float(want_w.sum() + other_w.sum()) or 1.0
    want, other = want_w / total, other_w / total

    def loss_and_grad(theta):
        W = theta.reshape(K, d + 1)
        A = S @ W.T
        f = logsumexp(A, axis=1)
        share = np.exp(A - f[:, None])  # d f / d A
        loss = (want @ np.logaddexp(0.0, -f) + other @ np.logaddexp(0.0, f)
                + 0.5 * _RIDGE * float((W[:, :d] ** 2).sum()))
        g_f = other * expit(f) - want * expit(-f)
        G = (share * g_f[:, None]).T @ S
        G[:, :d] += _RIDGE * W[:, :d]
        return loss, G.ravel()

    def stop_at_deadline(intermediate_result):
        if deadline is not None and time.perf_counter() >= deadline:
            raise StopIteration

    res = minimize(loss_and_grad, rng.normal(scale=_START_SCALE, size=K * (d + 1)), jac=True,
                   method="L-BFGS-B", callback=stop_at_deadline,
                   options={"maxiter": _MAX_ITER})
    W = res.x.reshape(K, d + 1)
    # back to the coordinates of Z: a.(z - mean)/std + b
    return [(W[k, :d] / std, float(W[k, d] - (W[k, :d] / std) @ mean)) for k in range(K)]
