"""Certified bounds of the 0-1 minimax risk classifier.

* :func:`minimax_risk` evaluates ``R(mu) = -tau^T mu + lambda^T |mu| + nu(mu)`` exactly, over
  every sample and every nonempty label subset (the most violated subset of a sample is found
  by the kernels of :mod:`exactclf._backend._mrc_kernels`): an upper bound on ``R*`` for any
  ``mu``.
* :func:`dual_lower_bound` turns any nonnegative weights on LP rows into a lower bound on
  ``R*``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .._backend import REFERENCE, Backend
from .._backend._mrc_kernels import most_violated_cpu, most_violated_xp

__all__ = [
    "RiskEvaluation",
    "minimax_risk",
    "class_scores_matrix",
    "most_violated",
    "most_violated_bruteforce",
    "dual_lower_bound",
    "mixture_lower_bound",
]


def most_violated(V, backend: Backend = REFERENCE):
    """Value and size of the most violated label subset of every sample.

    For scores ``V[i, y] = Phi(x_i, y)^T mu`` returns ``g[i] = max_C (sum_{y in C} V[i, y] - 1)
    / |C| + 1`` (the left-hand side ``F_(i,C) mu - b_C`` of the LP row, maximized over C) and
    the size of the maximizing subset (the smallest one on ties); the subset itself holds the
    ``size[i]`` largest scores. The CPU backend runs a Numba kernel, the others array-generic
    code on ``backend.xp``; all return identical values.

    Examples
    --------
    >>> import numpy as np
    >>> g, size = most_violated(np.array([[0.9, 0.8, -1.0], [0.2, 0.1, 0.0]]))
    >>> np.round(g, 6).tolist(), size.tolist()
    ([1.35, 0.766667], [2, 3])
    """
    if backend.name == "cpu":
        return most_violated_cpu(np.ascontiguousarray(V, dtype=np.float64))
    return most_violated_xp(V, backend.xp)


def most_violated_bruteforce(V: np.ndarray) -> np.ndarray:
    """``g`` of :func:`most_violated` by enumerating all ``2^K - 1`` subsets (reference)."""
    n, K = V.shape
    best = np.full(n, -np.inf)
    for mask in range(1, 2**K):
        members = [k for k in range(K) if mask >> k & 1]
        best = np.maximum(best, (V[:, members].sum(axis=1) - 1.0) / len(members) + 1.0)
    return best


class RiskEvaluation(NamedTuple):
    """``R(mu)``, ``nu(mu)``, per sample the value ``g`` and size of its most violated label
    subset (NumPy arrays), and the scores ``V`` (on the backend's device)."""

    R: float
    nu: float
    g: np.ndarray
    size: np.ndarray
    V: object


def class_scores_matrix(mu, n_classes: int, d: int, embedding=None) -> np.ndarray:
    """The ``K x d`` matrix whose row ``y`` maps ``psi(x)`` to the score ``Phi(x, y)^T mu``
    (``Phi(x, y) = B_y (x) psi(x)``, ``B = embedding``; None: one-hot)."""
    if embedding is None:
        return mu.reshape(n_classes, d)
    return embedding @ mu.reshape(embedding.shape[1], d)


def minimax_risk(Psi, mu, tau, lam, n_classes: int, backend: Backend = REFERENCE,
                 embedding=None) -> RiskEvaluation:
    """Certified ``R(mu) = -tau^T mu + lambda^T |mu| + nu(mu)`` over all samples and subsets.

    ``R(mu) >= R*`` for every ``mu``: it is the objective of the MRC LP at ``mu`` with ``nu``
    at its smallest feasible value.

    Parameters
    ----------
    Psi : array of shape (n_samples, d)
        ``psi(x_i)``, on ``backend``'s device (or a SciPy sparse matrix).
    mu, tau, lam : ndarray of shape (q * d,)
    n_classes : int
    backend : Backend
    embedding : ndarray of shape (n_classes, q) or None
        ``Phi(x, y) = embedding[y] (x) psi(x)``; None: one-hot (``q = n_classes``).

    Returns
    -------
    RiskEvaluation

    Examples
    --------
    >>> import numpy as np
    >>> ev = minimax_risk(np.ones((3, 1)), np.zeros(2), np.array([0.5, 0.5]), np.zeros(2), 2)
    >>> ev.R, ev.nu  # mu = 0: the uniform rule, 1 - 1/K
    (0.5, 0.5)
    """
    d = Psi.shape[1]
    M = np.ascontiguousarray(class_scores_matrix(mu, n_classes, d, embedding).T)
    if sp.issparse(Psi):
        V = backend.xp.asarray(np.ascontiguousarray(Psi @ M))
    else:
        V = Psi @ backend.xp.asarray(M)
    g, size = most_violated(V, backend)
    g = backend.asnumpy(g)
    nu = float(g.max())
    R = float(-tau @ mu + lam @ np.abs(mu) + nu)
    return RiskEvaluation(R, nu, g, backend.asnumpy(size), V)


def dual_lower_bound(U, masks, alpha, tau, lam, zero_tol: float = 0.0, embedding=None):
    """A lower bound on ``R*`` from any nonnegative weights ``alpha`` on LP rows.

    Row ``r`` is the constraint of a sample with features ``U[r] = psi(x)`` and label subset
    ``masks[r]`` (or a convex combination of such rows). For weights ``a`` summing to 1 and any
    ``mu``, ``nu(mu) >= sum_r a_r (F_r mu - b_r)``, hence

        R(mu) >= D(a) + sum_j (z_j mu_j + lambda_j |mu_j|),   D(a) = sum_r a_r (1 - 1/|C_r|),
        z = F^T a - tau,

    and ``R* >= D(a)`` when ``|z| <= lambda``. The empirical distribution (weight ``1/n`` on
    every ``(i, {y_i})``) has ``z = 0`` and ``D = 0``; mixing it in with weight ``t`` scales
    ``z`` and ``D`` by ``1 - t``, so the smallest ``t`` with ``(1 - t) |z| <= lambda`` gives
    the bound ``(1 - t) D(a)``. No row or feature needs to be in the LP for this: the bound
    holds for any ``alpha``, priced over *every* feature. On a coordinate with
    ``lambda_j = 0`` no mixing helps; there ``|z_j| <= zero_tol`` (a rounding tolerance: at a
    dual optimum that ``z_j`` is exactly 0) is accepted as zero, a larger ``|z_j|`` gives the
    trivial bound 0.

    Parameters
    ----------
    U : ndarray or scipy.sparse matrix of shape (n_rows, d)
    masks : ndarray of shape (n_rows, n_classes), bool
    alpha : ndarray of shape (n_rows,)
        Weights (the negated row duals of the restricted LP); clipped at 0 and normalized.
    tau, lam : ndarray of shape (q * d,)
    zero_tol : float, default=0.0
    embedding : ndarray of shape (n_classes, q) or None
        ``Phi(x, y) = embedding[y] (x) psi(x)``; None: one-hot.

    Returns
    -------
    bound : float
        A lower bound on ``R*``, at least 0.
    excess : ndarray of shape (q * d,)
        ``|z| - lambda`` (the dual infeasibility of every feature, before any mixing).

    Examples
    --------
    >>> import numpy as np
    >>> U = np.array([[1.0], [1.0], [1.0]])
    >>> masks = np.array([[True, False], [False, True], [True, True]])
    >>> tau, lam = np.array([0.5, 0.5]), np.array([0.1, 0.1])
    >>> bound, excess = dual_lower_bound(U, masks, np.array([0.0, 0.0, 1.0]), tau, lam)
    >>> float(bound), excess.tolist()  # z = 0: D = 1 - 1/2 is a valid bound
    (0.5, [-0.1, -0.1])
    >>> bound, _ = dual_lower_bound(U, masks, np.array([0.2, 0.0, 0.8]), tau, lam)
    >>> round(float(bound), 6)  # |z| = 0.1 = lambda: still feasible
    0.4
    >>> bound, _ = dual_lower_bound(U, masks, np.array([0.4, 0.0, 0.6]), tau, lam)
    >>> round(float(bound), 6)  # |z| = 0.2: half of D(a) = 0.3 remains
    0.15
    """
    sizes = masks.sum(axis=1)
    return mixture_lower_bound(U, masks / sizes[:, None], 1.0 - 1.0 / sizes, alpha, tau, lam,
                               zero_tol, embedding)


def mixture_lower_bound(U, Q, values, alpha, tau, lam, zero_tol: float = 0.0, embedding=None):
    """The bound of :func:`dual_lower_bound` for rows given by label distributions.

    Row ``r`` pairs a psi-vector ``U[r]`` with a distribution ``Q[r]`` over the labels and a
    value ``values[r]`` such that ``nu(mu) >= Q[r]^T V_r(mu) + values[r]`` for every ``mu``
    (``V_r`` the scores of ``U[r]``). For the 0-1 loss a row ``(x, C)`` has ``Q`` uniform on
    ``C`` and value ``1 - 1/|C|``; for the log loss, whose ``nu`` is a log-sum-exp, any ``Q``
    with its entropy as value (and ``Q = e_y`` with value 0). Then, for weights ``a``
    summing to 1, ``R* >= (1 - t) sum_r a_r values[r]`` with ``t`` the smallest mixing weight
    of the empirical distribution (value 0) that makes ``|z| <= lambda``,
    ``z = sum_r a_r (Q[r] B) (x) U[r] - tau``.

    Returns
    -------
    bound : float
    excess : ndarray of shape (q * d,)
        ``|z| - lambda``.

    Examples
    --------
    >>> import numpy as np
    >>> U = np.ones((1, 1))
    >>> tau, lam = np.array([0.5, 0.5]), np.zeros(2)
    >>> bound, _ = mixture_lower_bound(U, np.array([[0.5, 0.5]]), np.array([np.log(2)]),
    ...                                np.ones(1), tau, lam)
    >>> round(float(bound), 6)  # the uniform rule's log loss, log 2
    0.693147
    """
    w = np.maximum(np.asarray(alpha, dtype=np.float64), 0.0)
    total = w.sum()
    if not total > 0.0:
        return 0.0, np.abs(tau) - lam
    w = w / total
    D = float(w @ values)
    E = Q if embedding is None else Q @ embedding
    z = np.asarray(U.T @ (E * w[:, None])).T.ravel() - tau
    az = np.abs(z)
    excess = az - lam
    over = excess > 0.0
    scaled = over & (lam > 0.0)
    if np.any(over & (lam == 0.0) & (az > zero_tol)):
        return 0.0, excess
    t = float(np.max(1.0 - lam[scaled] / az[scaled])) if scaled.any() else 0.0
    return max((1.0 - t) * D, 0.0), excess
