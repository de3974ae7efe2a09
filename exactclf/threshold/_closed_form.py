"""Closed form of the threshold-net Lasso on a complete arrangement.

When every 0/1 pattern of the ``n`` points is realizable (``n`` affinely independent points,
e.g. ``n <= d + 1`` in general position), ``D w`` ranges over all of ``R^n`` and the least
``l1`` norm of weights producing a vector ``delta`` is ``max(delta)_+ + max(-delta)_+``:
write ``delta_+`` as the layer cake ``sum_j (v_j - v_{j-1}) 1{delta >= v_j}`` over its sorted
distinct positive values (cost ``max(delta)_+``), likewise ``delta_-``; conversely any
representation puts at least ``max_i delta_i`` on the positively weighted patterns that
contain the maximizing point. The Lasso becomes

    min_delta  1/2 |delta - y|^2 + beta (|(delta)_+|_inf + |(-delta)_+|_inf),

whose solution has the signs of ``y``, so it splits into two proximal steps of
``beta |.|_inf``, one on ``y_+`` and one on ``y_-``; by Moreau's identity each is the
residual of the Euclidean projection onto the ``l1`` ball of radius ``beta``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["project_l1_ball", "prox_linf", "closed_form_fit", "layer_cake", "complete_dual_norm"]


def project_l1_ball(v: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{u : |u|_1 <= radius}`` (sort-based).

    Examples
    --------
    >>> project_l1_ball(np.array([3.0, 1.0, 0.0]), 2.0)
    array([2., 0., 0.])
    """
    a = np.abs(v)
    if a.sum() <= radius:
        return v.copy()
    if radius <= 0:
        return np.zeros_like(v)
    s = np.sort(a)[::-1]
    cs = np.cumsum(s) - radius
    k = np.arange(1, len(s) + 1)
    rho = np.flatnonzero(s - cs / k > 0)[-1]
    tau = cs[rho] / (rho + 1)
    return np.sign(v) * np.maximum(a - tau, 0.0)


def prox_linf(v: np.ndarray, t: float) -> np.ndarray:
    """``argmin_u 1/2 |u - v|^2 + t |u|_inf = v - P_{|.|_1 <= t}(v)`` (Moreau).

    Examples
    --------
    >>> prox_linf(np.array([1.0, 1.0, 0.0]), 0.5)
    array([0.75, 0.75, 0.  ])
    """
    return v - project_l1_ball(v, t)


def closed_form_fit(y: np.ndarray, beta: float) -> np.ndarray:
    """The optimal network output ``delta`` on a complete arrangement (two proximal steps).

    Examples
    --------
    >>> closed_form_fit(np.array([1.0, 1.0, -1.0, 1.0]), 0.3)
    array([ 0.9,  0.9, -0.7,  0.9])
    """
    y = np.asarray(y, dtype=np.float64)
    return prox_linf(np.maximum(y, 0.0), beta) - prox_linf(np.maximum(-y, 0.0), beta)


def layer_cake(delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Patterns and weights with ``patterns @ weights == delta`` and
    ``|weights|_1 == max(delta)_+ + max(-delta)_+`` (the least possible).

    Returns ``(patterns, weights)``: boolean ``(n, k)`` and ``(k,)``.

    Examples
    --------
    >>> P, w = layer_cake(np.array([0.5, 2.0, -1.0, 0.0]))
    >>> P.astype(int), w
    (array([[1, 0, 0],
           [1, 1, 0],
           [0, 0, 1],
           [0, 0, 0]]), array([ 0.5,  1.5, -1. ]))
    """
    cols, weights = [], []
    for sign in (1.0, -1.0):
        v = sign * delta
        levels = np.unique(v[v > 0])
        prev = 0.0
        for lv in levels:
            cols.append(v >= lv)
            weights.append(sign * (lv - prev))
            prev = lv
    if not cols:
        return np.zeros((len(delta), 0), dtype=bool), np.zeros(0)
    return np.column_stack(cols), np.array(weights)


def complete_dual_norm(theta: np.ndarray) -> float:
    """``max_S |sum_{i in S} theta_i|`` over all subsets ``S``: the dual-feasibility norm
    ``|D^T theta|_inf`` when ``D`` holds every 0/1 pattern."""
    return float(max(theta[theta > 0].sum(), -theta[theta < 0].sum()))
