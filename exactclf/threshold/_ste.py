"""Straight-through-estimator (STE) training of two-layer threshold networks, in numpy.

The network is ``f(x) = sum_j w_j s_j 1{u_j . x + b_j >= 0}`` with weight decay
``beta / 2 * (s_j^2 + w_j^2)`` on the amplitudes (the threshold is scale invariant, so the
hidden weights carry no penalty); its best rescaling costs ``beta |s_j w_j|``, so the
objective reported is ``1/2 |f(X) - y|^2 + beta sum_j |s_j w_j|``, the quantity the convex
Lasso minimizes. The forward pass always uses the threshold; the backward pass replaces its
(zero) derivative by that of a proxy: identity (plain STE), ReLU, leaky ReLU or clipped ReLU.
Full-batch Adam.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PROXIES", "train_ste", "ste_objective"]

PROXIES = {
    "STE": lambda z: np.ones_like(z),
    "ReLU-STE": lambda z: (z > 0).astype(float),
    "LReLU-STE": lambda z: np.where(z > 0, 1.0, 0.01),
    "CReLU-STE": lambda z: ((z > 0) & (z < 1)).astype(float),
}


def _forward(X, U, b, s, w):
    Zp = X @ U + b
    A = (Zp >= 0).astype(float)
    return Zp, A, A @ (s * w)


def ste_objective(X, y, params, beta):
    U, b, s, w = params
    f = _forward(X, U, b, s, w)[2]
    return 0.5 * float(np.sum((f - y) ** 2)) + beta * float(np.sum(np.abs(s * w)))


def train_ste(X, y, width, beta, proxy="STE", epochs=3000, lr=1e-2, seed=0):
    """Train with Adam; return ``(params, best_objective)`` (the best iterate is kept)."""
    rng = np.random.default_rng(seed)
    n, d = X.shape
    U = rng.standard_normal((d, width)) / np.sqrt(d)
    b = 0.1 * rng.standard_normal(width)
    s = np.ones(width)
    w = rng.standard_normal(width) / np.sqrt(width)
    params = [U, b, s, w]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    dproxy = PROXIES[proxy]
    best, best_params = np.inf, [p.copy() for p in params]
    for t in range(1, epochs + 1):
        U, b, s, w = params
        Zp, A, f = _forward(X, U, b, s, w)
        obj = 0.5 * float(np.sum((f - y) ** 2)) + beta * float(np.sum(np.abs(s * w)))
        if obj < best:
            best, best_params = obj, [p.copy() for p in params]
        r = f - y
        gA = np.outer(r, s * w)  # d obj / d A
        gz = gA * dproxy(Zp)
        grads = [
            X.T @ gz,
            gz.sum(axis=0),
            (A.T @ r) * w + beta * s,
            (A.T @ r) * s + beta * w,
        ]
        for i, g in enumerate(grads):
            m[i] = 0.9 * m[i] + 0.1 * g
            v[i] = 0.999 * v[i] + 0.001 * g * g
            mh = m[i] / (1 - 0.9**t)
            vh = v[i] / (1 - 0.999**t)
            params[i] = params[i] - lr * mh / (np.sqrt(vh) + 1e-8)
    final = ste_objective(X, y, params, beta)
    if final < best:
        best, best_params = final, params
    return best_params, best
