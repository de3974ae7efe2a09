"""A smooth surrogate of the maxout network: starts for the exact local search.

The network labels a point as the union's class when ``max_k (a_k . z + b_k) > 0``. Its 0-1
loss is piecewise constant; replacing the max by the log-sum-exp ``f(z) = log sum_k
exp(a_k . z + b_k)`` (at most ``log K`` above it) and the 0-1 loss by the logistic loss gives
a smooth objective

    L(a, b) = [sum_i want_i softplus(-f(z_i)) + other_i softplus(f(z_i))] / sum_i (want_i +
    other_i) + ridge / 2 * sum_k |a_k|^2

on standardized features, minimized by L-BFGS from a random start. It is not convex (a
maxout of K >= 2 planes is not), so each start lands in its own local minimum; its planes
are a start for :func:`~exactclf.maxout._coreset.refine`, which re-solves one half-space at
a time exactly. It plays for K >= 2 the part LinearSVC and LogisticRegression play for one
plane: on large data sets the refined networks from its starts are often the fit's best,
far below what the other heuristics reach (``benchmarks/results/table2.txt``).

The logistic loss lets points far on their wrong side pull the planes, so
:func:`anneal_union` goes on from them, a second start, with a sigmoid loss of the same
smooth maximum, the normals scaled to unit norm and one temperature ``T`` for both the
maximum and the loss,

    L_T(W) = sum_i want_i sigmoid(-f_T(z_i) / T) + other_i sigmoid(f_T(z_i) / T),
    f_T(z) = T log sum_k exp((a_k . z + b_k) / (|A| T)),

which tends to the 0-1 loss of the network as ``T`` falls (``|A|``: the Frobenius norm of
the normals), halving ``T`` from stage to stage, and keeps the planes of the stage that errs
least.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, logsumexp

# the annealing schedule is the one plane's (exactclf._zero_one._incumbent.annealed_sigmoid),
# its first temperature a share of the spread of the (normalized) network's scores
from .._zero_one._incumbent import (
    _SIGMOID_COOLING,
    _SIGMOID_FIRST_T,
    _SIGMOID_MAX_ITER,
    _SIGMOID_STAGES,
    stop_at,
)

__all__ = ["anneal_union", "smooth_union"]

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
    S, mean, std = _standardized(Z)
    d = S.shape[1] - 1
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

    res = minimize(loss_and_grad, rng.normal(scale=_START_SCALE, size=K * (d + 1)), jac=True,
                   method="L-BFGS-B", callback=stop_at(deadline),
                   options={"maxiter": _MAX_ITER})
    return _from_standardized(res.x.reshape(K, d + 1), mean, std)


def _standardized(Z):
    """``Z`` with standardized columns and a column of ones, and the columns' mean and
    standard deviation."""
    Z = np.asarray(Z, dtype=np.float64)
    mean = Z.mean(axis=0)
    std = Z.std(axis=0)
    std[std == 0] = 1.0
    return np.c_[(Z - mean) / std, np.ones(len(Z))], mean, std


def _from_standardized(W, mean, std):
    """The planes ``W`` (rows ``(a, b)`` on standardized features) in the coordinates of
    ``Z``: ``a . (z - mean) / std + b``."""
    d = W.shape[1] - 1
    return [(W[k, :d] / std, float(W[k, d] - (W[k, :d] / std) @ mean))
            for k in range(W.shape[0])]


def anneal_union(Z: np.ndarray, want_w: np.ndarray, other_w: np.ndarray, planes,
                 deadline: float | None = None) -> list[tuple[np.ndarray, float]] | None:
    """The planes of the annealing stage (module docstring) whose union errs least, started
    from ``planes`` (in the coordinates of ``Z``, typically :func:`smooth_union`'s), or None
    when no stage errs less than they do. No stage starts after ``deadline``.

    A second start, not a replacement: on large data sets the annealed networks often
    refine to far fewer errors than the logistic fit's, but on small ones the logistic
    fit's can be the only one that refines to the optimum.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(300, 2))
    >>> want = (np.abs(Z[:, 0]) > 1).astype(float)
    >>> start = [(np.array([1.0, 0.3]), -0.5), (np.array([-1.0, 0.2]), -0.5)]
    >>> planes = anneal_union(Z, want, 1 - want, start)
    >>> def errors(p):
    ...     return int((np.any([Z @ a + b > 0 for a, b in p], axis=0) != (want > 0)).sum())
    >>> planes is not None and errors(planes) < errors(start)
    True
    """
    S, mean, std = _standardized(Z)
    total = float(want_w.sum() + other_w.sum()) or 1.0
    W = np.array([np.r_[a * std, b + a @ mean] for a, b in planes])
    best = _anneal(S, want_w / total, other_w / total, W, deadline)
    return None if best is None else _from_standardized(best, mean, std)


def _anneal(S, want, other, W, deadline):
    """The planes (rows ``(a_k, b_k)`` on the standardized ``S``) of the annealing stage
    (module docstring) from ``W`` whose union errs least, or None when none errs less than
    ``W``; no stage starts after ``deadline``, and one that runs past it stops there."""
    K, d = W.shape[0], W.shape[1] - 1

    def errors(W):
        inside = (S @ W.T > 0).any(axis=1)
        return float(want @ ~inside + other @ inside)

    def loss_and_grad(theta, T):
        W = theta.reshape(K, d + 1)
        norm = np.linalg.norm(W[:, :d]) or 1.0
        A = S @ W.T / norm
        f = T * logsumexp(A / T, axis=1)
        share = np.exp(A / T - f[:, None] / T)  # d f / d A
        p = expit(f / T)
        loss = want @ (1.0 - p) + other @ p
        g_A = share * ((other - want) * p * (1.0 - p) / T)[:, None]
        # A = S W^T / |normals|: the norm's share of the gradient falls on the normals only
        G = g_A.T @ S / norm
        G[:, :d] -= float((g_A * A).sum()) * W[:, :d] / norm**2
        return loss, G.ravel()

    norm = np.linalg.norm(W[:, :d])
    if not np.isfinite(norm) or norm == 0.0:
        return None
    W = W / norm
    best, best_errors = None, errors(W)
    T = _SIGMOID_FIRST_T * float(np.std((S @ W.T).max(axis=1)))
    for _ in range(_SIGMOID_STAGES):
        if (not np.isfinite(T) or T <= 0.0
                or deadline is not None and time.perf_counter() >= deadline):
            break
        with np.errstate(over="ignore", under="ignore"):
            theta = minimize(loss_and_grad, W.ravel(), args=(T,), jac=True,
                             method="L-BFGS-B", callback=stop_at(deadline),
                             options={"maxiter": _SIGMOID_MAX_ITER}).x
        W = theta.reshape(K, d + 1)
        norm = np.linalg.norm(W[:, :d])
        if not np.isfinite(norm) or norm == 0.0:
            break
        W = W / norm
        value = errors(W)
        if value < best_errors:
            best, best_errors = W, value
        T *= _SIGMOID_COOLING
    return best
